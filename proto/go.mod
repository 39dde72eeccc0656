module github.com/vantagehq/vantage/proto

go 1.26
