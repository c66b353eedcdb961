package parser_test

import (
	"fmt"

	"github.com/jetrpc/jetrpc/parser"
)

func ExampleParser_Parse() {
	var p parser.Parser // keep one per goroutine: it reuses scratch memory
	m := p.Parse([]byte(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`))
	r := m.Request
	fmt.Printf("%v method=%s params=%s id=%s notification=%v\n", m.Kind, r.Method, r.Params, r.ID, r.Notification)

	m = p.Parse([]byte(`{"jsonrpc":"2.0","method":"foobar, "params":"bar"}`))
	fmt.Printf("%v %d %d %s\n", m.Kind, m.Err.Code, m.Err.Offset, m.Err.Reason)
	// Output:
	// single method=subtract params=[42,23] id=1 notification=false
	// invalid -32700 36 expected ',' or '}' after object member
}

func ExampleMessage_Iter() {
	var p parser.Parser
	m := p.Parse([]byte(`[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"}, {"foo":"boo"}, {"jsonrpc":"2.0","method":"notify_hello","params":[7]}]`))
	for it := m.Iter(); it.Next(); {
		r := it.Request()
		fmt.Printf("method=%q id=%s notification=%v code=%d\n", r.Method, r.ID, r.Notification, r.Err.Code)
	}
	// Output:
	// method="sum" id="1" notification=false code=0
	// method="" id= notification=false code=-32600
	// method="notify_hello" id= notification=true code=0
}

func ExampleFramer() {
	var f parser.Framer
	stream := []byte("{\"id\":1}\n[{\"id\":2}]\n{\"id\":")
	for {
		start, end, st := f.Next(stream)
		if st == parser.NeedMore {
			stream = stream[end:] // whitespace before a value is consumed
		}
		if st != parser.Complete {
			fmt.Println(st) // the rest arrives later: call again with more bytes appended
			break
		}
		fmt.Printf("%s\n", stream[start:end])
		stream = stream[end:]
	}
	// Output:
	// {"id":1}
	// [{"id":2}]
	// need more
}

func ExampleAppendQuote() {
	b := []byte(`{"jsonrpc":"2.0","method":`)
	b = parser.AppendQuote(b, "say \"hi\"\n")
	b = append(b, '}')
	fmt.Printf("%s\n", b)
	// Output:
	// {"jsonrpc":"2.0","method":"say \"hi\"\n"}
}

func ExampleAppendEscaped() {
	// One JSON string from two pieces, with no string concatenated first.
	b := []byte(`"message":"`)
	b = parser.AppendEscaped(b, "Invalid params: ")
	b = parser.AppendEscaped(b, `field "a" is required`)
	b = append(b, '"')
	fmt.Printf("%s\n", b)
	// Output:
	// "message":"Invalid params: field \"a\" is required"
}
