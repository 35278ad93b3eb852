// Package controlplane starts a real etcd and kube-apiserver on 127.0.0.1 for
// the integration tests of the kube module, from the binaries that
// hack/build-control-plane.sh builds from Go modules, and stops them again.
package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Identity is a user the server knows by a bearer token.
type Identity struct {
	// User and Groups are what the server authenticates the token as.
	User   string
	Groups []string
	token  string
}

// Plane is a running etcd and kube-apiserver.
type Plane struct {
	// Host is the API server's URL.
	Host string
	// Dir holds the processes' data and logs; it is removed by Stop.
	Dir string

	identities map[string]Identity
	procs      []*exec.Cmd
	logs       []*os.File
	stopOnce   sync.Once
	stopErr    error
}

// Admin is the identity in group system:masters.
const Admin = "admin"

// NodeUser returns the user name of a node's kubelet identity.
func NodeUser(node string) string { return "system:node:" + node }

// BinDir returns the directory of the binaries: $NODESTATE_CONTROL_PLANE if
// set, else the build script's cache directory, building the binaries there
// first if they are missing (several minutes the first time).
func BinDir(ctx context.Context) (string, error) {
	if d := os.Getenv("NODESTATE_CONTROL_PLANE"); d != "" {
		return d, checkBins(d)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "hack", "build-control-plane.sh")
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("controlplane: building kube-apiserver and etcd: %w\n%s", err, errOut.String())
	}
	dir := string(bytes.TrimSpace(out.Bytes()))
	return dir, checkBins(dir)
}

func checkBins(dir string) error {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("controlplane: no executable %s in %s", b, dir)
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Start runs etcd and kube-apiserver from the binaries in binDir, with
// authorization Node,RBAC and the NodeRestriction admission plugin, and
// tokens for the admin and for the kubelets of nodes. It waits until the
// server is ready. The caller must call Stop, also on failure paths.
func Start(ctx context.Context, binDir string, nodes ...string) (*Plane, error) {
	dir, err := os.MkdirTemp("", "nodestate-controlplane-")
	if err != nil {
		return nil, err
	}
	p := &Plane{Dir: dir, identities: map[string]Identity{}}
	if err := p.start(ctx, binDir, nodes); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Plane) start(ctx context.Context, binDir string, nodes []string) error {
	ports := make([]int, 3)
	for i := range ports {
		port, err := freePort()
		if err != nil {
			return err
		}
		ports[i] = port
	}
	client, peer, secure := ports[0], ports[1], ports[2]

	// Service account keys and tokens.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	keyFile, pubFile := filepath.Join(p.Dir, "sa.key"), filepath.Join(p.Dir, "sa.pub")
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return err
	}
	p.identities[Admin] = Identity{User: Admin, Groups: []string{"system:masters"}, token: token()}
	for _, n := range nodes {
		p.identities[NodeUser(n)] = Identity{User: NodeUser(n), Groups: []string{"system:nodes"}, token: token()}
	}
	var csv bytes.Buffer
	for _, id := range p.identities {
		fmt.Fprintf(&csv, "%s,%s,%s-uid,\"%s\"\n", id.token, id.User, id.User, join(id.Groups))
	}
	tokenFile := filepath.Join(p.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, csv.Bytes(), 0o600); err != nil {
		return err
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	if err := p.run(filepath.Join(binDir, "etcd"), "etcd",
		"--name", "test", "--data-dir", filepath.Join(p.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "test="+peerURL, "--unsafe-no-fsync"); err != nil {
		return err
	}
	if err := p.run(filepath.Join(binDir, "kube-apiserver"), "kube-apiserver",
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(secure), "--cert-dir", filepath.Join(p.Dir, "certs"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pubFile, "--service-account-signing-key-file", keyFile,
		"--token-auth-file", tokenFile,
		"--authorization-mode", "Node,RBAC", "--anonymous-auth=false",
		"--enable-admission-plugins", "NodeRestriction",
		"--disable-admission-plugins", "ServiceAccount",
		"--endpoint-reconciler-type", "none"); err != nil {
		return err
	}
	p.Host = "https://127.0.0.1:" + strconv.Itoa(secure)
	return p.waitReady(ctx)
}

func join(s []string) string {
	out := ""
	for i, g := range s {
		if i > 0 {
			out += ","
		}
		out += g
	}
	return out
}

func (p *Plane) run(bin, name string, args ...string) error {
	logf, err := os.Create(filepath.Join(p.Dir, name+".log"))
	if err != nil {
		return err
	}
	p.logs = append(p.logs, logf)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, killed with the test binary if that dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("controlplane: starting %s: %w", name, err)
	}
	p.procs = append(p.procs, cmd)
	return nil
}

// waitReady polls /readyz until it answers ok, a process exits, or 90 s
// pass.
func (p *Plane) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, c := range p.procs {
			if c.ProcessState != nil {
				return fmt.Errorf("controlplane: %s exited: %s", c.Path, p.Log())
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+p.identities[Admin].token)
		if resp, err := hc.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: kube-apiserver not ready: %w\n%s", ctx.Err(), p.Log())
		case <-tick.C:
		}
	}
}

// Log returns the end of the processes' logs, for failure messages.
func (p *Plane) Log() string {
	var out bytes.Buffer
	for _, f := range p.logs {
		b, _ := os.ReadFile(f.Name())
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		fmt.Fprintf(&out, "--- %s\n%s\n", filepath.Base(f.Name()), b)
	}
	return out.String()
}

// Config returns a client configuration for an identity: Admin or
// NodeUser(node).
func (p *Plane) Config(identity string) (*rest.Config, error) {
	id, ok := p.identities[identity]
	if !ok {
		return nil, fmt.Errorf("controlplane: no identity %q", identity)
	}
	return &rest.Config{Host: p.Host, BearerToken: id.token, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS: 1000, Burst: 1000}, nil
}

// Client returns a clientset for an identity.
func (p *Plane) Client(identity string) (kubernetes.Interface, error) {
	cfg, err := p.Config(identity)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Kubeconfig writes a kubeconfig file for an identity and returns its path.
func (p *Plane) Kubeconfig(identity string) (string, error) {
	id, ok := p.identities[identity]
	if !ok {
		return "", fmt.Errorf("controlplane: no identity %q", identity)
	}
	path := filepath.Join(p.Dir, identity+".kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: user
  user:
    token: %s
contexts:
- name: test
  context:
    cluster: test
    user: user
current-context: test
`, p.Host, id.token)
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// Stop stops the processes (SIGTERM, then SIGKILL after 10 s) and removes
// Dir. It is safe to call more than once.
func (p *Plane) Stop() error {
	p.stopOnce.Do(func() {
		for i := len(p.procs) - 1; i >= 0; i-- {
			c := p.procs[i]
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
		for _, f := range p.logs {
			_ = f.Close()
		}
		if err := os.RemoveAll(p.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			p.stopErr = err
		}
	})
	return p.stopErr
}
