module github.com/iggo-dev/iggo

go 1.26.8
