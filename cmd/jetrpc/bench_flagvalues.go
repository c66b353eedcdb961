package main

// NOTE: the flag.Value types of jetrpc bench's flags that parse their
// value: --target, -schedule, -threshold (and --slo), -compression,
// -header and -jwt-secret. Each checks its value with the bench package's parser
// when the flag is parsed, so that a bad value is a usage error, and
// String prints what was set.

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/jetrpc/jetrpc/bench"
)

// targetFlag is --target: each use adds a NAME=URL.
type targetFlag struct{ ts *[]bench.NamedTarget }

func (f targetFlag) String() string {
	if f.ts == nil {
		return ""
	}
	var s []string
	for _, t := range *f.ts {
		s = append(s, t.Name+"="+t.URL)
	}
	return strings.Join(s, ", ")
}

func (f targetFlag) Set(s string) error {
	t, err := bench.ParseNamedTarget(s)
	if err != nil {
		return err
	}
	*f.ts = append(*f.ts, t)
	return nil
}

// scheduleFlag is -schedule, read by bench.ParseSchedule.
type scheduleFlag struct{ stages *[]bench.Stage }

func (f scheduleFlag) String() string {
	if f.stages == nil || len(*f.stages) == 0 {
		return ""
	}
	return fmt.Sprintf("%d stages", len(*f.stages))
}

func (f scheduleFlag) Set(s string) error {
	st, err := bench.ParseSchedule(s)
	if err != nil {
		return err
	}
	*f.stages = st
	return nil
}

// thresholdFlag is -threshold: each use adds a threshold, checked by
// bench.ParseThreshold.
type thresholdFlag struct{ ts *[]bench.Threshold }

func (f thresholdFlag) String() string {
	if f.ts == nil {
		return ""
	}
	var s []string
	for _, t := range *f.ts {
		s = append(s, t.Expr)
	}
	return strings.Join(s, ", ")
}

func (f thresholdFlag) Set(s string) error {
	t, err := bench.ParseThreshold(s)
	if err != nil {
		return err
	}
	*f.ts = append(*f.ts, t)
	return nil
}

// compressionFlag is -compression: the codings to ask for, read by
// bench.ParseCompression.
type compressionFlag struct{ codings *[]string }

func (f compressionFlag) String() string {
	if f.codings == nil {
		return ""
	}
	return strings.Join(*f.codings, ",")
}

func (f compressionFlag) Set(s string) error {
	c, err := bench.ParseCompression(s)
	if err != nil {
		return err
	}
	*f.codings = c
	return nil
}

// headerFlag is -header: each use adds a header to *h, checked by
// bench.ParseHeader.
type headerFlag struct{ h *http.Header }

func (f headerFlag) String() string {
	if f.h == nil {
		return ""
	}
	var lines []string
	for name, values := range *f.h {
		for _, v := range values {
			lines = append(lines, name+": "+v)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, ", ")
}

func (f headerFlag) Set(s string) error {
	name, value, err := bench.ParseHeader(s)
	if err != nil {
		return err
	}
	if *f.h == nil {
		*f.h = http.Header{}
	}
	f.h.Add(name, value)
	return nil
}

// jwtSecretFlag is -jwt-secret: the file is read, and its secret checked,
// when the flag is parsed.
type jwtSecretFlag struct {
	secret *[]byte
	path   *string
}

func (f jwtSecretFlag) String() string {
	if f.path == nil {
		return ""
	}
	return *f.path
}

func (f jwtSecretFlag) Set(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	secret, err := bench.ParseJWTSecret(text)
	if err != nil {
		return err
	}
	*f.secret, *f.path = secret, path
	return nil
}
