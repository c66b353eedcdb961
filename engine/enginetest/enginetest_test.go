package enginetest_test

import (
	"net/http"
	"testing"

	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func TestStartAndPost(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	e, addr := enginetest.Start(t, tab)
	resp, body := enginetest.Post(t, "http://"+addr+"/", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "X-Test: yes")
	if resp.StatusCode != http.StatusOK || string(body) != `{"jsonrpc":"2.0","result":3,"id":1}` || e.Conns() > 1 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, body = enginetest.Post(t, "http://"+addr+"/", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Accept: text/html")
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
