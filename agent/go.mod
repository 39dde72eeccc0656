module github.com/vantagehq/vantage/agent

go 1.26

replace github.com/vantagehq/vantage/pkg => ../pkg

replace github.com/vantagehq/vantage/proto => ../proto

require (
	github.com/vantagehq/vantage/pkg v0.0.0
	github.com/vantagehq/vantage/proto v0.0.0
)
