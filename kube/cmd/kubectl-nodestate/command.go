package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/nodestate/nodestate/kube/internal/explain"
)

// command holds the parsed flags.
type command struct {
	conn   *genericclioptions.ConfigFlags
	output string
	node   nodeFlags
	now    func() time.Time
}

func newCommand(fs *pflag.FlagSet) *command {
	c := &command{conn: genericclioptions.NewConfigFlags(true), now: time.Now}
	c.conn.AddFlags(fs)
	fs.StringVarP(&c.output, "output", "o", "", "output format: json or yaml (default: text)")
	c.node.add(fs)
	return c
}

func (c *command) client() (kubernetes.Interface, string, error) {
	ns, _, err := c.conn.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	cfg, err := c.conn.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	return cs, ns, nil
}

// textWriter is a report that renders as text.
type textWriter interface{ WriteText(io.Writer) error }

func (c *command) print(out io.Writer, r textWriter) error {
	switch c.output {
	case "":
		return r.WriteText(out)
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	return fmt.Errorf("unknown output format %q: want json or yaml", c.output)
}

func (c *command) checkOutput() error {
	if c.output != "" && c.output != "json" && c.output != "yaml" {
		return fmt.Errorf("unknown output format %q: want json or yaml", c.output)
	}
	return nil
}

func (c *command) explainPod(ctx context.Context, name string, out io.Writer) error {
	if err := c.checkOutput(); err != nil {
		return err
	}
	cs, ns, err := c.client()
	if err != nil {
		return err
	}
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return describe(err, "pod", name, ns)
	}
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.kind": "Pod", "involvedObject.name": name, "involvedObject.uid": string(pod.UID)}.String()})
	if err != nil {
		return describe(err, "events of pod", name, ns)
	}
	r, err := explain.Pod(pod, events.Items, c.now())
	if err != nil {
		return err
	}
	return c.print(out, r)
}

// describe turns an API error into one clear line.
func describe(err error, what, name, ns string) error {
	where := ""
	if ns != "" {
		where = fmt.Sprintf(" in namespace %q", ns)
	}
	if name != "" {
		what = fmt.Sprintf("%s %q", what, name)
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s not found%s", what, where)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return fmt.Errorf("not allowed to read %s%s: %v", what, where, apiMessage(err))
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Errorf("cannot reach the cluster at %s: %v", hostOf(uerr.URL), uerr.Err)
	}
	return fmt.Errorf("reading %s%s: %v", what, where, err)
}

// hostOf is the scheme and host of a request URL, without its path.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// apiMessage is the server's message of an API error, without the prefix
// client-go adds.
func apiMessage(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Message != "" {
		return s.Status().Message
	}
	return err.Error()
}
