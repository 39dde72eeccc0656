package check

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// GRPCSpec is the grpc.health.v1 Health/Check call a gRPC health check makes (an extension).
// The attempt passes when the server answers SERVING.
type GRPCSpec struct {
	Hostname string `json:"grpc_hostname" api:"required"`
	Port     int    `json:"grpc_port" api:"required"`
	// Service is the name the health service knows, e.g. "shop.v1.Cart"; "" asks about the
	// server as a whole.
	Service   string `json:"grpc_service"`
	TLS       bool   `json:"grpc_tls"`
	VerifySSL bool   `json:"verify_ssl"` // with TLS: verify the server's certificate chain and name
	// Metadata is sent with the call; values take {{NAME}} references as uptime headers do.
	Metadata map[string]string `json:"grpc_metadata"`
}

// defaultGRPC: the whole server, in plaintext, certificates verified once TLS is on.
func defaultGRPC() *GRPCSpec { return &GRPCSpec{VerifySSL: true} }

// exampleGRPC is a gRPC health check's configuration for Example.
func exampleGRPC() *GRPCSpec {
	return &GRPCSpec{Hostname: "cart.internal.example.com", Port: 8443, Service: "shop.v1.Cart", TLS: true,
		VerifySSL: false, Metadata: map[string]string{"authorization": "Bearer cart-probe", "x-probe": "vantage"}}
}

func (s Spec) validateGRPC(fe *FieldErrors) {
	g := s.GRPC
	if g == nil || s.onlyKindSpec() != 1 {
		fe.add("check_type", "a GRPC check must have gRPC settings only")
		return
	}
	if msg := hostnameProblem(g.Hostname, true); msg != "" {
		fe.add("grpc_hostname", "%s", msg)
	}
	intRange(fe, "grpc_port", g.Port, 1, 65535, "")
	if msg := grpcServiceProblem(g.Service); msg != "" {
		fe.add("grpc_service", "%s", msg)
	}
	validateMetadata(fe, g.Metadata)
}

// grpcServiceProblem judges a health service name: "" or a fully-qualified protobuf service
// name, dot-separated identifiers (letters, digits, underscores, not starting with a digit).
func grpcServiceProblem(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > MaxGRPCServiceLength {
		return fmt.Sprintf("must be at most %d characters", MaxGRPCServiceLength)
	}
	for _, ident := range strings.Split(s, ".") {
		if !isIdentifier(ident) {
			return `must be empty (the whole server) or a service name such as "shop.v1.Cart": dot-separated identifiers of letters, digits and underscores`
		}
	}
	return ""
}

func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validateMetadata: at most MaxHeaders entries; names are lower-case HTTP/2 header names that
// gRPC leaves to applications (not "grpc-" reserved, no binary "-bin" values, no pseudo
// headers); values of at most MaxHeaderValueLength printable ASCII characters.
func validateMetadata(fe *FieldErrors, md map[string]string) {
	if len(md) > MaxHeaders {
		fe.add("grpc_metadata", "must have at most %d entries", MaxHeaders)
		return
	}
	for _, name := range sortedKeys(md) {
		field := "grpc_metadata." + name
		switch {
		case !isMetadataName(name):
			fe.add(field, "is not a valid metadata name (lower-case letters, digits and -_. only)")
		case strings.HasPrefix(name, "grpc-"):
			fe.add(field, "is reserved by gRPC")
		case strings.HasSuffix(name, "-bin"):
			fe.add(field, "binary metadata is not supported")
		}
		v := md[name]
		if utf8.RuneCountInString(v) > MaxHeaderValueLength {
			fe.add(field, "must be at most %d characters", MaxHeaderValueLength)
			continue
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				fe.add(field, "must be printable ASCII")
				break
			}
		}
	}
}

func isMetadataName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
