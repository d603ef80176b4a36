// Command iggo is the one Iggo binary: the broker (`iggo server`), the
// management and data CLI, and the benchmark tool.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "server" {
		fmt.Fprintln(os.Stderr, "iggo server: not yet available in this build; the broker lands with the server core")
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "usage: iggo server")
	os.Exit(2)
}
