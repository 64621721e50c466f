// Command httpserver is the HTTP service of the integration tests: it runs in a container on
// a Docker network and answers under whatever names the network gives it.
//
//	GET /            200 "hello from <Host header>"
//	GET /redirect    302 to the URL in ?to=
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
)

func main() {
	addr := flag.String("addr", ":8080", "listen `address`")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", r.Host)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr()) // the tests wait for this line
	log.Fatal(http.Serve(ln, mux))
}
