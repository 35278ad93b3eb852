// Package controlplane starts a real etcd and kube-apiserver on 127.0.0.1 for
// end-to-end tests (the kube module's integration tests, the vk module's,
// and a node agent author's own), and on request the real
// kube-controller-manager and kube-scheduler next to them, from the binaries
// that hack/build-control-plane.sh builds from Go modules (kubectl among
// them; BinDir finds or builds them), and stops them again.
//
// Every component verifies TLS: Start makes a CA, signs the API server's
// serving certificate with it, and puts the CA into every client
// configuration and kubeconfig it hands out.
package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
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

// Options says what Start runs.
type Options struct {
	// Nodes get kubelet identities (NodeUser) with tokens.
	Nodes []string
	// Users get identities of their name in no group but
	// system:authenticated: what RBAC bindings give them is all they may do.
	Users []string
	// Controllers also starts kube-controller-manager (every controller on by
	// default, leader election off) and kube-scheduler, and waits for their
	// /healthz. The ServiceAccount admission plugin is then on, as in a real
	// cluster, since the controller manager creates each namespace's default
	// ServiceAccount; without controllers it is off, or no pod could be
	// created.
	Controllers bool
	// ControllerQPS, when positive, is the --kube-api-qps and
	// --kube-api-burst of the controller manager and the scheduler (their
	// default is 20/30 requests per second, which paces any large rollout).
	ControllerQPS int
	// Ports, if set, picks the ports instead of FreePorts: n distinct ports
	// for each start. The tests use it to hand out a port that is taken.
	Ports func(n int) ([]int, error)
}

// DefaultOptions returns an etcd and kube-apiserver alone: no node
// identities or users, no controllers, free ports.
func DefaultOptions() Options { return Options{} }

// Plane is a running etcd and kube-apiserver, with kube-controller-manager
// and kube-scheduler when started with Options.Controllers.
type Plane struct {
	// Host is the API server's URL.
	Host string
	// Dir holds the processes' data and logs; it is removed by Stop.
	Dir string
	// BinDir holds the binaries, kubectl among them.
	BinDir string
	// CAData is the PEM of the CA that signed the API server's certificate.
	CAData []byte
	// Attempts is how many starts it took: more than one when a process
	// found its port taken (see StartWith).
	Attempts int

	identities map[string]Identity
	procs      []*Process
	stopOnce   sync.Once
	stopErr    error
}

// Admin is the identity in group system:masters.
const Admin = "admin"

// NodeUser returns the user name of a node's kubelet identity.
func NodeUser(node string) string { return "system:node:" + node }

// Binaries are the executables BinDir holds.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"}

// BinDir returns the directory of the binaries: $NODESTATE_CONTROL_PLANE if
// set, else the build script's cache directory, building the binaries there
// first if they are missing (several minutes the first time). It fails when
// one of Binaries is missing.
func BinDir(ctx context.Context) (string, error) {
	if d := os.Getenv("NODESTATE_CONTROL_PLANE"); d != "" {
		return d, checkBins(d)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "hack", "build-control-plane.sh")
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("controlplane: building the control plane: %w\n%s", err, errOut.String())
	}
	dir := string(bytes.TrimSpace(out.Bytes()))
	return dir, checkBins(dir)
}

func checkBins(dir string) error {
	for _, b := range Binaries {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("controlplane: no executable %s in %s", b, dir)
		}
	}
	return nil
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that nothing listened
// on a moment ago. Another process may take one before its user binds it
// (the kernel hands the same range to outgoing connections): StartWith
// starts again when that happens.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		// Each listener stays open until all are picked, so no port comes
		// twice.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
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
	return StartWith(ctx, binDir, Options{Nodes: nodes})
}

// StartWith is Start with Options: with opts.Controllers it also runs
// kube-controller-manager and kube-scheduler and waits until both are
// healthy. On error everything started is stopped again.
//
// The ports are picked free just before the processes bind them, so another
// process can take one in between; a start whose process then exits with
// "address already in use" is stopped and made again with new ports, up to
// StartAttempts starts in all (Plane.Attempts says how many it took).
func StartWith(ctx context.Context, binDir string, opts Options) (*Plane, error) {
	pick := opts.Ports
	if pick == nil {
		pick = FreePorts
	}
	for attempt := 1; ; attempt++ {
		dir, err := os.MkdirTemp("", "nodestate-controlplane-")
		if err != nil {
			return nil, err
		}
		p := &Plane{Dir: dir, BinDir: binDir, Attempts: attempt, identities: map[string]Identity{}}
		err = p.start(ctx, opts, pick)
		if err == nil {
			return p, nil
		}
		taken := p.portTaken()
		// What a failed start left running is killed at once.
		_ = p.stop(0)
		if !taken || attempt == StartAttempts || ctx.Err() != nil {
			if taken {
				err = fmt.Errorf("controlplane: a port was taken in each of %d starts: %w", attempt, err)
			}
			return nil, err
		}
	}
}

// StartAttempts is how many times StartWith starts the processes when one
// of them finds its port taken.
const StartAttempts = 3

// portTaken reports whether a process's log says it could not bind its
// port.
func (p *Plane) portTaken() bool {
	for _, pr := range p.procs {
		if b, err := os.ReadFile(pr.LogPath); err == nil && bytes.Contains(b, []byte("address already in use")) {
			return true
		}
	}
	return false
}

func (p *Plane) start(ctx context.Context, opts Options, pick func(int) ([]int, error)) error {
	binDir := p.BinDir
	// etcd's client and peer ports, the API server's, the controller
	// manager's and the scheduler's.
	ports, err := pick(5)
	if err != nil {
		return err
	}
	if len(ports) != 5 {
		return fmt.Errorf("controlplane: %d ports picked, want 5", len(ports))
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
	for _, n := range opts.Nodes {
		p.identities[NodeUser(n)] = Identity{User: NodeUser(n), Groups: []string{"system:nodes"}, token: token()}
	}
	for _, u := range opts.Users {
		p.identities[u] = Identity{User: u, token: token()}
	}
	var csv bytes.Buffer
	for _, id := range p.identities {
		fmt.Fprintf(&csv, "%s,%s,%s-uid,\"%s\"\n", id.token, id.User, id.User, join(id.Groups))
	}
	tokenFile := filepath.Join(p.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, csv.Bytes(), 0o600); err != nil {
		return err
	}

	pki, err := p.writePKI()
	if err != nil {
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
	apiArgs := []string{"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(secure),
		"--tls-cert-file", pki.serverCert, "--tls-private-key-file", pki.serverKey,
		"--client-ca-file", pki.caCert,
		"--service-cluster-ip-range", serviceRange,
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pubFile, "--service-account-signing-key-file", keyFile,
		"--token-auth-file", tokenFile,
		"--authorization-mode", "Node,RBAC", "--anonymous-auth=false",
		"--enable-admission-plugins", "NodeRestriction",
		// 127.0.0.1 is a loopback address, which the endpoint reconciler
		// refuses for the kubernetes Service: without this it exits.
		"--endpoint-reconciler-type", "none"}
	if !opts.Controllers {
		// No controller creates the default ServiceAccount of a namespace.
		apiArgs = append(apiArgs, "--disable-admission-plugins", "ServiceAccount")
	}
	if err := p.run(filepath.Join(binDir, "kube-apiserver"), "kube-apiserver", apiArgs...); err != nil {
		return err
	}
	p.Host = "https://127.0.0.1:" + strconv.Itoa(secure)
	if err := p.waitReady(ctx); err != nil || !opts.Controllers {
		return err
	}
	return p.startControllers(ctx, keyFile, pki, opts.ControllerQPS, ports[3], ports[4])
}

// serviceRange is the ClusterIP range of the API server and the controller
// manager.
const serviceRange = "10.0.0.0/24"

// startControllers runs kube-controller-manager and kube-scheduler as the
// admin and waits for both /healthz.
func (p *Plane) startControllers(ctx context.Context, saKey string, pki pkiFiles, qps, kcmPort, schedPort int) error {
	kubeconfig, err := p.Kubeconfig(Admin)
	if err != nil {
		return err
	}
	auth := []string{"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--bind-address", "127.0.0.1", "--leader-elect=false", "-v", "2"}
	if qps > 0 {
		auth = append(auth, "--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(qps))
	}
	if err := p.run(filepath.Join(p.BinDir, "kube-controller-manager"), "kube-controller-manager", append(auth,
		"--secure-port", strconv.Itoa(kcmPort),
		"--cert-dir", filepath.Join(p.Dir, "kcm-certs"),
		// Every controller that is on by default: Deployments, ReplicaSets,
		// Jobs, StatefulSets, DaemonSets, EndpointSlices, node lifecycle,
		// taint eviction, service accounts, garbage collection, ...
		"--controllers", "*",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file", saKey, "--root-ca-file", pki.caCert,
		"--cluster-signing-cert-file", pki.caCert, "--cluster-signing-key-file", pki.caKey,
		"--service-cluster-ip-range", serviceRange)...); err != nil {
		return err
	}
	if err := p.run(filepath.Join(p.BinDir, "kube-scheduler"), "kube-scheduler", append(auth,
		"--secure-port", strconv.Itoa(schedPort),
		"--cert-dir", filepath.Join(p.Dir, "scheduler-certs"))...); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		port int
	}{{"kube-controller-manager", kcmPort}, {"kube-scheduler", schedPort}} {
		if err := p.waitHealthy(ctx, c.name, "https://127.0.0.1:"+strconv.Itoa(c.port)+"/healthz"); err != nil {
			return err
		}
	}
	return nil
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
	pr, err := StartProcess(name, filepath.Join(p.Dir, name+".log"), bin, args...)
	if err != nil {
		return err
	}
	p.procs = append(p.procs, pr)
	return nil
}

// waitReady polls the API server's /readyz, as the admin and verifying its
// certificate against the CA, until it answers ok.
func (p *Plane) waitReady(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return p.poll(ctx, "kube-apiserver", hc, p.Host+"/readyz", p.identities[Admin].token)
}

// waitHealthy polls the /healthz of a controller (always allowed, served
// with a self-signed certificate) until it answers ok.
func (p *Plane) waitHealthy(ctx context.Context, name, url string) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return p.poll(ctx, name, hc, url, "")
}

// poll GETs url until it answers 200 "ok", a process exits, or 90 s pass.
func (p *Plane) poll(ctx context.Context, name string, hc *http.Client, url, token string) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, pr := range p.procs {
			select {
			case <-pr.Done():
				// The exited process's last lines first: they say why.
				return fmt.Errorf("controlplane: %s exited while waiting for %s: %v\n--- the end of %s.log\n%s\n%s",
					pr.Name, name, pr.Err(), pr.Name, p.tail(pr.Name, 10), p.Log())
			default:
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if resp, err := hc.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %s not ready: %w\n%s", name, ctx.Err(), p.Log())
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of a process's log.
func (p *Plane) tail(name string, n int) string {
	b, err := os.ReadFile(filepath.Join(p.Dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Log returns the end of the processes' logs, for failure messages.
func (p *Plane) Log() string {
	var out bytes.Buffer
	for _, pr := range p.procs {
		b, _ := os.ReadFile(pr.LogPath)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		fmt.Fprintf(&out, "--- %s\n%s\n", filepath.Base(pr.LogPath), b)
	}
	return out.String()
}

// Config returns a client configuration for an identity: Admin,
// NodeUser(node) or one of Options.Users.
func (p *Plane) Config(identity string) (*rest.Config, error) {
	id, ok := p.identities[identity]
	if !ok {
		return nil, fmt.Errorf("controlplane: no identity %q", identity)
	}
	return &rest.Config{Host: p.Host, BearerToken: id.token, TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData},
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
    certificate-authority-data: %s
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
`, p.Host, base64.StdEncoding.EncodeToString(p.CAData), id.token)
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// Stop stops the processes (SIGTERM, then SIGKILL after 10 s) and removes
// Dir. It is safe to call more than once.
func (p *Plane) Stop() error { return p.stop(10 * time.Second) }

// stop is Stop with grace between SIGTERM and SIGKILL; with none it sends
// SIGKILL alone.
func (p *Plane) stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		for i := len(p.procs) - 1; i >= 0; i-- {
			p.procs[i].Stop(grace)
		}
		if err := os.RemoveAll(p.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			p.stopErr = err
		}
	})
	return p.stopErr
}

// Kubectl runs the real kubectl of BinDir as identity with args and returns
// its standard output; a failure's error carries its standard error.
func (p *Plane) Kubectl(ctx context.Context, identity string, args ...string) ([]byte, error) {
	kubeconfig, err := p.Kubeconfig(identity)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(p.BinDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("controlplane: kubectl %v: %w\n%s", args, err, stderr.String())
	}
	return out, nil
}
