// Package examples holds runnable programs that use the Go SDK (package
// client) against an Iggy server on 127.0.0.1:8090 with the default root
// credentials:
//
//	go run ./examples/produce -count 10000
//	go run ./examples/consume -from first
//	go run ./examples/consumer-group -group workers   (start several)
//
// Each program takes -addr, -username, -password, -stream and -topic.
package examples
