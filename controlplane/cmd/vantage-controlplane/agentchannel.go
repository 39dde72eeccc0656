package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/fleet"
	"github.com/vantagehq/vantage/controlplane/internal/ingest"
	"github.com/vantagehq/vantage/pkg/tlsfiles"
)

// grpcTransport is the agents' stream's transport as configured: TLS with the control plane's
// certificate (and with VANTAGE_GRPC_CLIENT_CA, client certificates required), reloaded when
// its files change; or plaintext. It logs which credentials agents may present.
func grpcTransport(cfg config.Config, log *slog.Logger) ([]grpc.ServerOption, error) {
	log = log.With("component", "ingest")
	modes := []string{"agent tokens"}
	if cfg.AgentToken != "" {
		modes = append(modes, "the shared VANTAGE_AGENT_TOKEN (for any region: local development only)")
	}
	if cfg.GRPCTLSCert == "" {
		if host, _, err := net.SplitHostPort(cfg.GRPCAddr); err == nil && !isLoopback(host) {
			log.Warn("the agents' gRPC stream is plaintext on a non-loopback address: set VANTAGE_GRPC_TLS_CERT and VANTAGE_GRPC_TLS_KEY",
				"grpc_addr", cfg.GRPCAddr)
		}
		log.Info("agent stream credentials", "tls", false, "accepts", modes)
		return nil, nil
	}
	c, err := tlsfiles.ServerConfig(cfg.GRPCTLSCert, cfg.GRPCTLSKey, cfg.GRPCClientCA, tlsfiles.Options{
		OnReload: func(what string, err error) {
			if err != nil {
				log.Error("TLS file changed but cannot be loaded; keeping the previous one", "file", what, "err", err)
				return
			}
			log.Info("TLS file reloaded", "file", what)
		}})
	if err != nil {
		return nil, fmt.Errorf("agent stream TLS: %w", err)
	}
	log.Info("agent stream credentials", "tls", true, "client_certificates_required", cfg.GRPCClientCA != "", "accepts", modes)
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(c))}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// localAgents lists the ingest registry's streams as the fleet publishes them.
func localAgents(reg *ingest.Registry) func() []fleet.LocalAgent {
	return func() []fleet.LocalAgent {
		agents := reg.Agents()
		out := make([]fleet.LocalAgent, 0, len(agents))
		for _, a := range agents {
			id, err := uuid.Parse(a.SessionID)
			if err != nil {
				continue // session ids are uuids: ingest makes them
			}
			out = append(out, fleet.LocalAgent{SessionID: id, AgentID: a.AgentID, TokenID: a.TokenID, Regions: a.Regions,
				Version: a.Version, Hostname: a.Hostname, Capabilities: a.Capabilities, ConnectedAt: a.ConnectedAt,
				Results: a.Stats.Results(), ProbesRunning: a.Stats.ProbesRunning()})
		}
		return out
	}
}
