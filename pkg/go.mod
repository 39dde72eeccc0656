module github.com/vantagehq/vantage/pkg

go 1.26.0

replace github.com/vantagehq/vantage/proto => ../proto

require (
	github.com/andybalholm/cascadia v1.3.5
	github.com/ohler55/ojg v1.28.5
)

require (
	github.com/dlclark/regexp2/v2 v2.5.2 // indirect
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/pprof v0.0.0-20230207041349-798e818bf904 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
)

require (
	github.com/evanw/esbuild v0.28.2
	github.com/vantagehq/vantage/proto v0.0.0
	golang.org/x/net v0.62.0
	google.golang.org/protobuf v1.36.12
)
