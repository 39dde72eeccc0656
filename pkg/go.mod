module github.com/vantagehq/vantage/pkg

go 1.26.0

replace github.com/vantagehq/vantage/proto => ../proto

require (
	github.com/andybalholm/cascadia v1.3.5
	github.com/ohler55/ojg v1.28.5
)

require golang.org/x/net v0.62.0 // indirect
