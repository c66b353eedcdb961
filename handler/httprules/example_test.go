package httprules_test

import (
	"fmt"

	"github.com/jetrpc/jetrpc/handler/httprules"
)

// The body of a health check's 503 while the server is not ready names
// the reason, quoted as JSON.
func ExampleNotReadyBody() {
	fmt.Println(httprules.NotReadyBody(`replica "b" lagging`))
	fmt.Println(httprules.NotReadyBody(""))
	// Output:
	// {"status":"not_ready","reason":"replica \"b\" lagging"}
	// {"status":"not_ready","reason":"not ready"}
}
