package controlplane

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a program started by StartProcess: in a process group of its
// own, killed with the process that started it if that one dies, its
// standard output and error written to a log file. The control plane's
// processes are Processes, and so is an oracle node that a test starts
// beside them.
type Process struct {
	// Name names it in errors.
	Name string
	// LogPath is the file its output goes to.
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args, its output written to a new file at
// logPath, and returns once it has started.
func StartProcess(name, logPath, bin string, args ...string) (*Process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that Stop reaches what it starts; and
	// killed if the process that started it dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("controlplane: starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited and its log is closed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is what waiting for the process returned (nil for exit 0); it is
// only meaningful once Done is closed.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Pid is the process's ID, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the process's group and waits for the process to
// exit, sending SIGKILL to the group once grace has passed; with a grace of
// zero it sends SIGKILL at once. It returns once the process has exited,
// and may be called more than once.
func (p *Process) Stop(grace time.Duration) {
	if grace <= 0 {
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
		return
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	}
}
