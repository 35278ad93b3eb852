package main

import (
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 5, 3*time.Second, 1); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"3s  Exited        restarts=0 ready=false Terminated:Error exit=1\n",
		"back-off 10s restarting failed container=app pod=web-7d9f_default(1b4e28ba)",
		"back-off 20s restarting failed container=app pod=web-7d9f_default(1b4e28ba)",
		"back-off 40s restarting failed container=app pod=web-7d9f_default(1b4e28ba)",
		"restartCount 4 after 1m25s of virtual time; next back-off 1m20s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if err := run(&out, 0, time.Second, 1); err == nil {
		t.Error("zero crashes must be refused")
	}
}
