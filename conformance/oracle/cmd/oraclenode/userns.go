package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// reexecEnv marks the process run again in a user namespace, so that it
// is not run again once more.
const reexecEnv = "ORACLENODE_IN_USERNS"

// needsUserNamespace reports whether the kubelet could not start here: its
// OOM watcher opens the kernel log, which a user who is not root may not
// read when kernel.dmesg_restrict is 1, and the kubelet then fails, unless
// it runs in a user namespace, where its KubeletInUserNamespace gate (on
// by default in 1.37) lets it go on without the watcher.
func needsUserNamespace() bool {
	if os.Getenv(reexecEnv) != "" {
		return false
	}
	f, err := os.Open("/dev/kmsg")
	if err == nil {
		_ = f.Close()
		return false
	}
	return errors.Is(err, os.ErrPermission)
}

// runInUserNamespace runs the command again in a new user namespace, as
// its root mapped to the caller's user and group (no other namespace
// changes: the network and the file system stay the caller's), passes
// SIGINT and SIGTERM on, and returns the exit code of that run.
func runInUserNamespace() (int, error) {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), reexecEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("oraclenode: the kernel log is not readable, and a user namespace could not be made: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return exit.ExitCode(), nil
			}
			if err != nil {
				return 1, err
			}
			return 0, nil
		}
	}
}
