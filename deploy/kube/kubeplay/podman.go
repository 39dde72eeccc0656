package kubeplay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Podman runs podman with the project's containers.conf.
type Podman struct {
	// Conf is the containers.conf podman reads (CONTAINERS_CONF); empty: podman's own.
	Conf string
}

// Run runs podman with args and returns its standard output.
func (p Podman) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "podman", args...) //nolint:gosec // G204: podman with arguments built by this package
	cmd.Env = os.Environ()
	if p.Conf != "" {
		cmd.Env = append(cmd.Env, "CONTAINERS_CONF="+p.Conf)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Up creates the plan's secrets and plays each unit on network, its Service names as the
// network aliases of its pods. dir receives the YAML files. Down undoes it, also after a
// partial Up.
func (p Podman) Up(ctx context.Context, plan *Plan, network, dir string) error {
	for name, data := range plan.Secrets {
		// podman reads the secrets of kube play as a JSON map of base64 values.
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		f := filepath.Join(dir, "secret-"+name+".json")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			return err
		}
		if _, err := p.Run(ctx, "secret", "create", name, f); err != nil {
			return err
		}
	}
	for _, u := range plan.Units {
		f := filepath.Join(dir, u.Name+".yaml")
		if err := os.WriteFile(f, []byte(u.YAML), 0o600); err != nil {
			return err
		}
		net := network
		for _, a := range u.Aliases {
			net += ",alias=" + a
		}
		net = strings.Replace(net, ",", ":", 1)
		if _, err := p.Run(ctx, "kube", "play", "--network", net, f); err != nil {
			return err
		}
	}
	return nil
}

// Down removes what Up made: the units' pods, their volumes and the secrets. It goes on
// after an error and returns them all.
func (p Podman) Down(ctx context.Context, plan *Plan, dir string) error {
	var errs []error
	for _, u := range plan.Units {
		f := filepath.Join(dir, u.Name+".yaml")
		if _, err := os.Stat(f); err != nil {
			continue // never played
		}
		if _, err := p.Run(ctx, "kube", "down", f); err != nil {
			errs = append(errs, err)
		}
	}
	for _, v := range plan.Volumes {
		if out, _ := p.Run(ctx, "volume", "ls", "-q", "--filter", "name=^"+v+"$"); strings.TrimSpace(out) == "" {
			continue
		}
		if _, err := p.Run(ctx, "volume", "rm", "-f", v); err != nil {
			errs = append(errs, err)
		}
	}
	for name := range plan.Secrets {
		if _, err := os.Stat(filepath.Join(dir, "secret-"+name+".json")); err != nil {
			continue
		}
		if _, err := p.Run(ctx, "secret", "rm", name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// IP is a container's address on network.
func (p Podman) IP(ctx context.Context, container, network string) (string, error) {
	out, err := p.Run(ctx, "inspect", "--format", fmt.Sprintf(`{{(index .NetworkSettings.Networks %q).IPAddress}}`, network), container)
	if err != nil {
		return "", err
	}
	ip := strings.TrimSpace(out)
	if ip == "" {
		return "", fmt.Errorf("container %s has no address on %s", container, network)
	}
	return ip, nil
}

// Logs is the last lines of a container's output, standard output and error interleaved.
func (p Podman) Logs(ctx context.Context, container string, lines int) (string, error) {
	cmd := exec.CommandContext(ctx, "podman", "logs", "--tail", fmt.Sprint(lines), container) //nolint:gosec // G204: a container this test started
	cmd.Env = os.Environ()
	if p.Conf != "" {
		cmd.Env = append(cmd.Env, "CONTAINERS_CONF="+p.Conf)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
