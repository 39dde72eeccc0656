package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/pkg/envconfig"
)

// healthcheck is the container image's HEALTHCHECK: the image has no shell and no curl, so the
// binary itself GETs /healthz on its own VANTAGE_HTTP_ADDR and fails unless it answers 200.
func healthcheck(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	listen := getenv("VANTAGE_HTTP_ADDR")
	if listen == "" {
		listen = defaultOf("VANTAGE_HTTP_ADDR")
	}
	url, err := healthzURL(listen)
	if err != nil {
		return fmt.Errorf("healthcheck: VANTAGE_HTTP_ADDR: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	// No proxy: the request goes to this container's own listener.
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// healthzURL is the /healthz URL of a listen address: an unspecified host (":8080",
// "0.0.0.0:8080", "[::]:8080") is reached on loopback.
func healthzURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// defaultOf is the documented default of a VANTAGE_* variable.
func defaultOf(name string) string {
	v, _ := envconfig.Lookup(config.Vars(), name)
	return v.Default
}
