module github.com/iggo-dev/iggo

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.30.0
	pgregory.net/rapid v1.3.0
)

require github.com/klauspost/cpuid/v2 v2.2.10 // indirect
