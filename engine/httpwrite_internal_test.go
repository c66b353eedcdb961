package engine

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestAppendReplyHead_sameBytesAsLineByLine: the reply heads appended in
// one piece from the Date's datedHeads are, byte for byte, the heads
// appended line by line (status line, Server and Date, Connection and
// CORS lines, Content-Type, Content-Length), for every combination of
// persistence, version and origin, every number of length digits, and
// across a change of the Date.
//
// An engine's ticker may format the Date while the test runs (one left
// by an earlier test, stopping): a run during which the Date changed is
// run again.
func TestAppendReplyHead_sameBytesAsLineByLine(t *testing.T) {
	defer updateDate(time.Now())
	for _, now := range []time.Time{time.Now(), time.Date(2031, 12, 31, 23, 59, 59, 0, time.UTC)} {
		for try := 0; ; try++ {
			updateDate(now)
			d := dated.Load()
			date := now.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")
			bad := replyHeadMismatch(date)
			if string(d.serverDate) != "Server: jetrpc\r\nDate: "+date+"\r\n" {
				bad = fmt.Sprintf("the Server and Date lines %q", d.serverDate)
			}
			if dated.Load() == d && bad == "" || try == 10 {
				if bad != "" {
					t.Fatal(bad)
				}
				break
			}
		}
	}
}

// replyHeadMismatch returns what differs between the reply heads
// appended in one piece and those appended line by line with the Date
// date, or "".
func replyHeadMismatch(date string) string {
	for _, keep := range []bool{true, false} {
		for _, minor := range []int{0, 1} {
			for _, origin := range []string{"", "https://a.example"} {
				start := "HTTP/1.1 200 OK\r\nServer: jetrpc\r\nDate: " + date + "\r\n"
				cors := "" // the lines Engine.corsLines holds for origin
				if origin != "" {
					cors = "Access-Control-Allow-Origin: " + origin + "\r\nVary: Origin\r\n"
					start += cors
				}
				switch {
				case !keep:
					start += "Connection: close\r\n"
				case minor == 0:
					start += "Connection: keep-alive\r\n"
				}
				start += "Content-Type: application/json\r\nContent-Length: "
				k := corsCache{lines: cors} // a connection's: the head with its CORS lines, made once a Date
				for digits := 1; digits <= 19; digits++ {
					want := "xy" + start + "0000000000000000000"[:digits] + "\r\n\r\n"
					if got := string(appendReplyHead([]byte("xy"), keep, minor, digits, cors)); got != want {
						return fmt.Sprintf("keep %v minor %d origin %q digits %d:\n%q\nwant\n%q", keep, minor, origin, digits, got, want)
					}
					if keep && minor == 1 && cors != "" {
						if got := string(k.appendReplyHead([]byte("xy"), digits)); got != want {
							return fmt.Sprintf("corsCache, origin %q digits %d:\n%q\nwant\n%q", origin, digits, got, want)
						}
					}
				}
				body := `{"jsonrpc":"2.0","result":3,"id":1}`
				want := start + strconv.Itoa(len(body)) + "\r\n\r\n" + body
				if got := string(appendReply(nil, []byte(body), keep, minor, cors)); got != want {
					return fmt.Sprintf("appendReply, keep %v minor %d origin %q:\n%q\nwant\n%q", keep, minor, origin, got, want)
				}
			}
		}
	}
	return ""
}

// TestCORSCache_headFollowsTheDate: a connection's reply head with its
// CORS lines, made for one Date, is made again when the Date changes.
func TestCORSCache_headFollowsTheDate(t *testing.T) {
	defer updateDate(time.Now())
	lines := "Access-Control-Allow-Origin: https://a.example\r\nVary: Origin\r\n"
	k := corsCache{lines: lines}
	for _, now := range []time.Time{time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2031, 6, 7, 8, 9, 10, 0, time.UTC)} {
		updateDate(now)
		want := string(appendReplyHead(nil, true, 1, 2, lines))
		if got := string(k.appendReplyHead(nil, 2)); got != want {
			t.Fatalf("at %v:\n%q\nwant\n%q", now, got, want)
		}
	}
}
