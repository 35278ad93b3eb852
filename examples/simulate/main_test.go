package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		args    []string
		want    []string
		wantErr bool
	}{
		{args: nil, want: []string{"# kubelet stops at t=0", "50.1s    50.1s..54.6s      node-1  Ready True -> Unknown", "5m50.1s  5m50.1s..5m54.6s  node-1  pod deleted default/plain", "```mermaid\ntimeline"}},
		{args: []string{"-window", "0", "-format", "table"}, want: []string{"50.1s    node-1  Ready True -> Unknown"}},
		{args: []string{"-scenario", "zone-outage", "-format", "table", "-window", "0"}, want: []string{"1m10.1s  a-3   taint added node.kubernetes.io/unreachable:NoExecute"}},
		{args: []string{"-list"}, want: []string{"cluster-outage", "flapping-network", "kubelet-stops", "memory-pressure", "zone-outage"}},
		{args: []string{"-spec", "default-tolerations off;node n1 zone=a down=0s- pods=p;node n2 zone=a", "-grace", "40s", "-format", "mermaid"}, want: []string{"45s : n1 MemoryPressure False -> Unknown", "n1 pod deleted default/p"}},
		{args: []string{"-spec", "node n1 zone=a down=0s-;node n2 zone=a", "-phase", "2s", "-format", "table"}, want: []string{"57s   n1    Ready True -> Unknown"}},
		{args: []string{"-window", "0", "-format", "table", "-kubernetes-version", "1.33"}, want: []string{"55.2s    node-1  taint added node.kubernetes.io/unreachable:NoExecute", "5m55.2s  node-1  pod deleted default/plain"}},
		{args: []string{"-window", "0", "-format", "table", "-kubernetes-version", "v1.34.4"}, want: []string{"50.1s    node-1  taint added node.kubernetes.io/unreachable:NoExecute"}},
		{args: []string{"-spec", "node n1 zone=a down=0s- pods=p;node n2 zone=a", "-grace", "40s", "-kubernetes-version", "1.33", "-format", "table"}, want: []string{"45s    n1    Ready True -> Unknown", "50s    n1    taint added node.kubernetes.io/unreachable:NoExecute"}},
		{args: []string{"-kubernetes-version", "1.32"}, wantErr: true},
		{args: []string{"-scenario", "nope"}, wantErr: true},
		{args: []string{"-spec", "node n1;grace 5s"}, wantErr: true},
		{args: []string{"-format", "xml"}, wantErr: true},
	}
	for _, tt := range tests {
		var b strings.Builder
		err := run(tt.args, &b)
		if (err != nil) != tt.wantErr {
			t.Errorf("run(%q): err = %v, wantErr %v", tt.args, err, tt.wantErr)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("run(%q): output lacks %q:\n%s", tt.args, w, b.String())
			}
		}
	}
}
