package http1_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

func TestAppendStatusLine(t *testing.T) {
	for code, want := range map[int]string{
		http1.StatusOK:                   "HTTP/1.1 200 OK\r\n",
		http1.StatusNoContent:            "HTTP/1.1 204 No Content\r\n",
		http1.StatusMethodNotAllowed:     "HTTP/1.1 405 Method Not Allowed\r\n",
		http1.StatusPayloadTooLarge:      "HTTP/1.1 413 Payload Too Large\r\n",
		http1.StatusUnsupportedMediaType: "HTTP/1.1 415 Unsupported Media Type\r\n",
		http1.StatusHeaderTooLarge:       "HTTP/1.1 431 Request Header Fields Too Large\r\n",
		http1.StatusVersionNotSupported:  "HTTP/1.1 505 HTTP Version Not Supported\r\n",
		599:                              "HTTP/1.1 599 \r\n",
		100:                              "HTTP/1.1 100 Continue\r\n",
		999:                              "HTTP/1.1 999 \r\n",
	} {
		if got := string(http1.AppendStatusLine([]byte("x"), code)); got != "x"+want {
			t.Errorf("%d: %q, want %q", code, got, want)
		}
	}
	for _, code := range []int{0, 99, 1000, -200} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AppendStatusLine(%d) did not panic", code)
				}
			}()
			http1.AppendStatusLine(nil, code)
		}()
	}
}

func TestStatusText(t *testing.T) {
	for code, want := range map[int]string{
		http1.StatusBadRequest:         "Bad Request",
		http1.StatusUnauthorized:       "Unauthorized",
		http1.StatusForbidden:          "Forbidden",
		http1.StatusNotFound:           "Not Found",
		http1.StatusMethodNotAllowed:   "Method Not Allowed",
		http1.StatusNotImplemented:     "Not Implemented",
		http1.StatusSwitchingProtocols: "Switching Protocols",
		599:                            "",
		0:                              "",
	} {
		if got := http1.StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", code, got, want)
		}
	}
	// Every code with a text has a status line made of it.
	for code := 100; code < 1000; code++ {
		if text := http1.StatusText(code); text != "" {
			line := string(http1.AppendStatusLine(nil, code))
			if want := "HTTP/1.1 " + string(rune('0'+code/100)) + string(rune('0'+code/10%10)) + string(rune('0'+code%10)) + " " + text + "\r\n"; line != want {
				t.Errorf("%d: %q, want %q", code, line, want)
			}
		}
	}
}
