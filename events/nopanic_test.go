package events_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// kept keeps results the calls would otherwise drop.
var kept any

// exportedAPI lists the exported functions and methods of the package in dir, from its
// source, as "pkg.Func" and "pkg.Type.Method"; methods of an unexported type are listed under
// the exported types that embed it (promoted).
func exportedAPI(t *testing.T, dir string, promoted map[string][]string) []string {
	t.Helper()
	fs := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fs, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg := f.Name.Name
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				out = append(out, pkg+"."+fd.Name.Name)
				continue
			}
			typ := fd.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			switch x := typ.(type) {
			case *ast.IndexListExpr:
				typ = x.X
			case *ast.IndexExpr:
				typ = x.X
			}
			name := typ.(*ast.Ident).Name
			if !ast.IsExported(name) {
				for _, outer := range promoted[name] {
					out = append(out, pkg+"."+outer+"."+fd.Name.Name)
				}
				continue
			}
			out = append(out, pkg+"."+name+"."+fd.Name.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestNoPanics calls every exported function and method of events and eventstest with zero
// and nil arguments, on zero values, nil pointers where a method documents them, and
// constructed values (docs/conventions.md section 2): none may panic. The list of calls is
// checked against the packages' source, so a new export without a call here fails the test.
func TestNoPanics(t *testing.T) {
	ctx := context.Background()
	var noCtx context.Context // a nil context, which no method may choke on
	var zt time.Time
	fc := testingclock.NewFakeClock(t0)
	newB := func() *events.Broadcaster {
		o := events.DefaultBroadcasterOptions()
		o.Clock = fc
		b, err := events.NewBroadcaster(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddSink(eventstest.NewSink(fc, 0), events.DefaultCorrelatorOptions()); err != nil {
			t.Fatal(err)
		}
		return b
	}
	newSB := func() *events.SeriesBroadcaster {
		o := events.DefaultSeriesBroadcasterOptions()
		o.Clock = fc
		b, err := events.NewSeriesBroadcaster(o, eventstest.NewSeriesSink(fc, 0))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	newRec := func() *events.Recorder {
		r, err := newB().NewRecorder(v1.EventSource{}, events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	newSRec := func() *events.SeriesRecorder {
		r, err := newSB().NewRecorder("c", "i", events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	newQ := func() *events.SinkQueue {
		q, err := events.NewSinkQueue(events.DefaultSinkQueueOptions(), events.DefaultCorrelatorOptions())
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	var nilB *events.Broadcaster
	var nilSB *events.SeriesBroadcaster
	var nilRec *events.Recorder
	var nilSRec *events.SeriesRecorder
	var nilC *events.Correlator
	var nilQ *events.SinkQueue
	var nilS *events.Series
	var nilIE *events.InvalidEventError
	var nilOE *events.OptionError

	calls := map[string][]func(){
		"events.Broadcaster.AddSink": {func() { _ = new(events.Broadcaster).AddSink(nil, events.CorrelatorOptions{}) }, func() { _ = nilB.AddSink(nil, events.CorrelatorOptions{}) },
			func() { _ = newB().AddSink(nil, events.CorrelatorOptions{}) }, func() { _ = newB().AddSink(eventstest.NewSink(nil, 0), events.CorrelatorOptions{}) }},
		"events.Broadcaster.Flush":       {func() { _ = new(events.Broadcaster).Flush(noCtx) }, func() { _ = nilB.Flush(noCtx) }, func() { _ = newB().Flush(noCtx) }},
		"events.Broadcaster.NewRecorder": {func() { _, _ = new(events.Broadcaster).NewRecorder(v1.EventSource{}, events.RecorderOptions{}) }, func() { _, _ = nilB.NewRecorder(v1.EventSource{}, events.RecorderOptions{}) }, func() { _, _ = newB().NewRecorder(v1.EventSource{}, events.RecorderOptions{}) }},
		"events.Broadcaster.NextRetry":   {func() { new(events.Broadcaster).NextRetry() }, func() { nilB.NextRetry() }, func() { newB().NextRetry() }},
		"events.Broadcaster.Shutdown":    {func() { _ = new(events.Broadcaster).Shutdown(noCtx) }, func() { _ = nilB.Shutdown(noCtx) }, func() { _ = newB().Shutdown(noCtx) }},
		"events.Broadcaster.StartRecordingToSink": {func() { _ = new(events.Broadcaster).StartRecordingToSink(nil, events.CorrelatorOptions{}) }, func() { _ = nilB.StartRecordingToSink(nil, events.CorrelatorOptions{}) },
			func() { _ = newB().StartRecordingToSink(nil, events.CorrelatorOptions{}) }},
		"events.Broadcaster.Stats":           {func() { new(events.Broadcaster).Stats() }, func() { nilB.Stats() }, func() { newB().Stats() }},
		"events.BroadcasterOptions.Validate": {func() { _ = events.BroadcasterOptions{}.Validate() }},
		"events.Correlator.Correlate": {func() { _, _ = new(events.Correlator).Correlate(nil, zt) }, func() { _, _ = nilC.Correlate(nil, zt) },
			func() { _, _ = mustCorrelator(t, events.DefaultCorrelatorOptions()).Correlate(nil, zt) }, func() { _, _ = mustCorrelator(t, events.DefaultCorrelatorOptions()).Correlate(&v1.Event{}, zt) }},
		"events.Correlator.CorrelateTo": {func() { _, _, _, _ = new(events.Correlator).CorrelateTo(nil, zt, nil, nil) }, func() { _, _, _, _ = nilC.CorrelateTo(nil, zt, nil, nil) },
			func() {
				_, _, _, _ = mustCorrelator(t, events.DefaultCorrelatorOptions()).CorrelateTo(nil, zt, nil, nil)
			},
			func() {
				_, _, _, _ = mustCorrelator(t, events.DefaultCorrelatorOptions()).CorrelateTo(&v1.Event{}, zt, &v1.Event{}, nil)
			}},
		"events.Correlator.Len":                  {func() { new(events.Correlator).Len() }, func() { nilC.Len() }},
		"events.Correlator.Options":              {func() { new(events.Correlator).Options() }, func() { nilC.Options() }},
		"events.Correlator.Stats":                {func() { new(events.Correlator).Stats() }, func() { nilC.Stats() }},
		"events.Correlator.UpdateState":          {func() { new(events.Correlator).UpdateState(nil) }, func() { nilC.UpdateState(&v1.Event{}) }, func() { mustCorrelator(t, events.DefaultCorrelatorOptions()).UpdateState(nil) }},
		"events.Decision.String":                 {func() { _ = events.Decision(0).String() }},
		"events.DefaultBroadcasterOptions":       {func() { kept = events.DefaultBroadcasterOptions() }},
		"events.DefaultOptions":                  {func() { kept = events.DefaultOptions() }},
		"events.DefaultCorrelatorOptions":        {func() { kept = events.DefaultCorrelatorOptions() }},
		"events.Options.Validate":                {func() { _ = events.Options{}.Validate() }},
		"events.DefaultRecorderOptions":          {func() { kept = events.DefaultRecorderOptions() }},
		"events.DefaultSeriesBroadcasterOptions": {func() { kept = events.DefaultSeriesBroadcasterOptions() }},
		"events.DefaultSinkQueueOptions":         {func() { kept = events.DefaultSinkQueueOptions() }},
		"events.EventName":                       {func() { events.EventName("", 0, nil) }, func() { events.EventName("UPPER", -1, nil) }},
		"events.FieldSelector":                   {func() { _, _ = events.FieldSelector(nil) }, func() { _, _ = events.FieldSelector(&v1.ObjectReference{}) }},
		"events.InvalidEventError.Error":         {func() { _ = new(events.InvalidEventError).Error() }, func() { _ = nilIE.Error() }},
		"events.InvalidEventError.Unwrap":        {func() { _ = new(events.InvalidEventError).Unwrap() }, func() { _ = nilIE.Unwrap() }},
		"events.KeyOf":                           {func() { events.KeyOf(nil) }, func() { events.KeyOf(&eventsv1.Event{}) }},
		"events.NewBroadcaster":                  {func() { _, _ = events.NewBroadcaster(events.BroadcasterOptions{}) }},
		"events.NewCorrelator":                   {func() { _, _ = events.NewCorrelator(events.CorrelatorOptions{}) }},
		"events.NewSeries":                       {func() { events.NewSeries() }},
		"events.NewSeriesBroadcaster":            {func() { _, _ = events.NewSeriesBroadcaster(events.SeriesBroadcasterOptions{}, nil) }, func() { _, _ = events.NewSeriesBroadcaster(events.DefaultSeriesBroadcasterOptions(), nil) }},
		"events.NewSinkQueue":                    {func() { _, _ = events.NewSinkQueue(events.SinkQueueOptions{}, events.CorrelatorOptions{}) }, func() { _, _ = events.NewSinkQueue(events.DefaultSinkQueueOptions(), events.CorrelatorOptions{}) }},
		"events.OptionError.Error":               {func() { _ = new(events.OptionError).Error() }, func() { _ = nilOE.Error() }},
		"events.OptionError.Unwrap":              {func() { _ = new(events.OptionError).Unwrap() }, func() { _ = nilOE.Unwrap() }},
		"events.CorrelatorOptions.Validate":      {func() { _ = events.CorrelatorOptions{}.Validate() }},
		"events.Recorder.AnnotatedEventf":        {func() { new(events.Recorder).AnnotatedEventf(nil, nil, "", "", "") }, func() { nilRec.AnnotatedEventf(nil, nil, "", "", "") }, func() { newRec().AnnotatedEventf(nil, nil, "", "", "") }},
		"events.Recorder.Event":                  {func() { new(events.Recorder).Event(nil, "", "", "") }, func() { nilRec.Event(nil, "", "", "") }, func() { newRec().Event(nil, "", "", "") }},
		"events.Recorder.Eventf":                 {func() { new(events.Recorder).Eventf(nil, "", "", "") }, func() { nilRec.Eventf(nil, "", "", "") }, func() { newRec().Eventf(nil, "", "", "%v", nil) }},
		"events.Recorder.MakeEvent":              {func() { _, _ = new(events.Recorder).MakeEvent(nil, nil, "", "", "") }, func() { _, _ = nilRec.MakeEvent(nil, nil, "", "", "") }, func() { _, _ = newRec().MakeEvent(nil, nil, "", "", "") }},
		"events.Recorder.Record":                 {func() { _ = new(events.Recorder).Record(nil, nil, "", "", "") }, func() { _ = nilRec.Record(nil, nil, "", "", "") }, func() { _ = newRec().Record(&v1.Pod{}, nil, "", "", "") }},
		"events.Recorder.WithLogger":             {func() { new(events.Recorder).WithLogger(logr.Logger{}).Event(nil, "", "", "") }, func() { nilRec.WithLogger(logr.Logger{}) }, func() { newRec().WithLogger(logr.Logger{}).Event(nil, "", "", "") }},
		"events.Reference":                       {func() { _, _ = events.Reference(nil, nil) }, func() { _, _ = events.Reference(nil, &v1.Pod{}) }, func() { _, _ = events.Reference(nil, (*v1.ObjectReference)(nil)) }},
		"events.Result.String":                   {func() { _ = events.Result{}.String() }},
		"events.Retryable":                       {func() { events.Retryable(nil) }},
		"events.Series.Finish":                   {func() { new(events.Series).Finish(zt) }, func() { nilS.Finish(zt) }},
		"events.Series.Finished":                 {func() { new(events.Series).Finished(events.SeriesWrite{}, false) }, func() { nilS.Finished(events.SeriesWrite{}, false) }},
		"events.Series.Get":                      {func() { new(events.Series).Get(events.SeriesKey{}) }, func() { nilS.Get(events.SeriesKey{}) }},
		"events.Series.Len":                      {func() { new(events.Series).Len() }, func() { nilS.Len() }},
		"events.Series.Observe":                  {func() { new(events.Series).Observe(nil, zt) }, func() { nilS.Observe(nil, zt) }, func() { new(events.Series).Observe(&eventsv1.Event{}, zt) }},
		"events.Series.Refresh":                  {func() { new(events.Series).Refresh() }, func() { nilS.Refresh() }},
		"events.Series.Refreshed":                {func() { new(events.Series).Refreshed(events.SeriesWrite{}, nil) }, func() { nilS.Refreshed(events.SeriesWrite{}, &eventsv1.Event{}) }},
		"events.SeriesBroadcaster.Flush":         {func() { _ = new(events.SeriesBroadcaster).Flush(noCtx) }, func() { _ = nilSB.Flush(noCtx) }, func() { _ = newSB().Flush(noCtx) }},
		"events.SeriesBroadcaster.NewRecorder": {func() { _, _ = new(events.SeriesBroadcaster).NewRecorder("", "", events.RecorderOptions{}) }, func() { _, _ = nilSB.NewRecorder("", "", events.RecorderOptions{}) },
			func() { _, _ = newSB().NewRecorder("", "", events.RecorderOptions{}) }},
		"events.SeriesBroadcaster.NextRetry": {func() { new(events.SeriesBroadcaster).NextRetry() }, func() { nilSB.NextRetry() }, func() { newSB().NextRetry() }},
		"events.SeriesBroadcaster.Shutdown":  {func() { _ = new(events.SeriesBroadcaster).Shutdown(noCtx) }, func() { _ = nilSB.Shutdown(noCtx) }, func() { _ = newSB().Shutdown(noCtx) }},
		"events.SeriesBroadcaster.Start": {func() { _ = new(events.SeriesBroadcaster).Start(noCtx) }, func() { _ = nilSB.Start(noCtx) },
			func() { b := newSB(); _ = b.Start(noCtx); _ = b.Shutdown(ctx) }},
		"events.SeriesBroadcaster.Stats":           {func() { new(events.SeriesBroadcaster).Stats() }, func() { nilSB.Stats() }, func() { newSB().Stats() }},
		"events.SeriesBroadcasterOptions.Validate": {func() { _ = events.SeriesBroadcasterOptions{}.Validate() }},
		"events.SeriesRecorder.AnnotatedEventf":    {func() { new(events.SeriesRecorder).AnnotatedEventf(nil, nil, nil, "", "", "", "") }, func() { nilSRec.AnnotatedEventf(nil, nil, nil, "", "", "", "") }, func() { newSRec().AnnotatedEventf(nil, nil, nil, "", "", "", "") }},
		"events.SeriesRecorder.Eventf":             {func() { new(events.SeriesRecorder).Eventf(nil, nil, "", "", "", "") }, func() { nilSRec.Eventf(nil, nil, "", "", "", "") }, func() { newSRec().Eventf(nil, nil, "", "", "", "") }},
		"events.SeriesRecorder.MakeEvent":          {func() { _, _ = new(events.SeriesRecorder).MakeEvent(nil, nil, nil, "", "", "", "") }, func() { _, _ = nilSRec.MakeEvent(nil, nil, nil, "", "", "", "") }, func() { _, _ = newSRec().MakeEvent(&v1.Pod{}, nil, nil, "", "", "", "") }},
		"events.SeriesRecorder.Record":             {func() { _ = new(events.SeriesRecorder).Record(nil, nil, nil, "", "", "", "") }, func() { _ = nilSRec.Record(nil, nil, nil, "", "", "", "") }, func() { _ = newSRec().Record(nil, nil, nil, "", "", "", "") }},
		"events.SeriesRecorder.WithLogger":         {func() { new(events.SeriesRecorder).WithLogger(logr.Logger{}).Eventf(nil, nil, "", "", "", "") }, func() { nilSRec.WithLogger(logr.Logger{}) }, func() { newSRec().WithLogger(logr.Logger{}).Eventf(nil, nil, "", "", "", "") }},
		"events.SinkQueue.Abandon":                 {func() { new(events.SinkQueue).Abandon() }, func() { nilQ.Abandon() }, func() { newQ().Abandon() }},
		"events.SinkQueue.Done":                    {func() { new(events.SinkQueue).Done(nil, nil, zt) }, func() { nilQ.Done(nil, nil, zt) }, func() { newQ().Done(nil, nil, zt) }},
		"events.SinkQueue.Due":                     {func() { new(events.SinkQueue).Due() }, func() { nilQ.Due() }, func() { newQ().Due() }},
		"events.SinkQueue.Len":                     {func() { new(events.SinkQueue).Len() }, func() { nilQ.Len() }, func() { newQ().Len() }},
		"events.SinkQueue.Next":                    {func() { new(events.SinkQueue).Next(zt) }, func() { nilQ.Next(zt) }, func() { newQ().Next(zt) }},
		"events.SinkQueue.Push": {func() { _ = new(events.SinkQueue).Push(nil, zt) }, func() { _ = nilQ.Push(nil, zt) }, func() { _ = newQ().Push(nil, zt) },
			func() { q := newQ(); _ = q.Push(&v1.Event{}, zt); req, _ := q.Next(zt); q.Done(nil, nil, zt); _ = req }},
		"events.SinkQueue.Stats":           {func() { new(events.SinkQueue).Stats() }, func() { nilQ.Stats() }, func() { newQ().Stats() }},
		"events.SinkQueueOptions.Validate": {func() { _ = events.SinkQueueOptions{}.Validate() }},
		"events.ValidateSeriesEvent":       {func() { _ = events.ValidateSeriesEvent("", "", "", "") }},

		"eventstest.Event":                          {func() { eventstest.Event(zt).Example() }},
		"eventstest.Stream":                         {func() { eventstest.Stream(0).Example() }},
		"eventstest.NewSink":                        {func() { eventstest.NewSink(nil, 0) }},
		"eventstest.NewSeriesSink":                  {func() { eventstest.NewSeriesSink(nil, 0) }},
		"eventstest.Recorded.String":                {func() { _ = eventstest.Recorded{}.String() }},
		"eventstest.Recorder.AnnotatedEventf":       {func() { new(eventstest.Recorder).AnnotatedEventf(nil, nil, "", "", "") }},
		"eventstest.Recorder.Event":                 {func() { new(eventstest.Recorder).Event(nil, "", "", "") }},
		"eventstest.Recorder.Eventf":                {func() { new(eventstest.Recorder).Eventf(nil, "", "", "") }},
		"eventstest.Recorder.Events":                {func() { new(eventstest.Recorder).Events() }},
		"eventstest.Recorder.Reset":                 {func() { new(eventstest.Recorder).Reset() }},
		"eventstest.Recorder.Strings":               {func() { new(eventstest.Recorder).Strings() }},
		"eventstest.SeriesRecorder.AnnotatedEventf": {func() { new(eventstest.SeriesRecorder).AnnotatedEventf(nil, nil, nil, "", "", "", "") }},
		"eventstest.SeriesRecorder.Eventf":          {func() { new(eventstest.SeriesRecorder).Eventf(nil, nil, "", "", "", "") }},
		"eventstest.SeriesRecorder.Events":          {func() { new(eventstest.SeriesRecorder).Events() }},
		"eventstest.SeriesRecorder.Reset":           {func() { new(eventstest.SeriesRecorder).Reset() }},
		"eventstest.SeriesRecorder.Strings":         {func() { new(eventstest.SeriesRecorder).Strings() }},
		"eventstest.SeriesSink.Calls":               {func() { new(eventstest.SeriesSink).Calls("") }},
		"eventstest.SeriesSink.Create":              {func() { _, _ = new(eventstest.SeriesSink).Create(noCtx, nil) }, func() { _, _ = new(eventstest.SeriesSink).Create(noCtx, &eventsv1.Event{}) }},
		"eventstest.SeriesSink.Events":              {func() { new(eventstest.SeriesSink).Events() }},
		"eventstest.SeriesSink.Patch":               {func() { _, _ = new(eventstest.SeriesSink).Patch(noCtx, nil, nil) }, func() { _, _ = new(eventstest.SeriesSink).Patch(noCtx, &eventsv1.Event{}, nil) }},
		"eventstest.SeriesSink.Requests":            {func() { new(eventstest.SeriesSink).Requests() }},
		"eventstest.SeriesSink.SetFault":            {func() { new(eventstest.SeriesSink).SetFault(nil) }},
		"eventstest.Sink.Calls":                     {func() { new(eventstest.Sink).Calls("") }},
		"eventstest.Sink.Create":                    {func() { _, _ = new(eventstest.Sink).Create(noCtx, nil) }, func() { _, _ = new(eventstest.Sink).Create(noCtx, &v1.Event{}) }},
		"eventstest.Sink.Events":                    {func() { new(eventstest.Sink).Events() }},
		"eventstest.Sink.Patch":                     {func() { _, _ = new(eventstest.Sink).Patch(noCtx, nil, nil) }, func() { _, _ = new(eventstest.Sink).Patch(noCtx, &v1.Event{}, nil) }},
		"eventstest.Sink.Requests":                  {func() { new(eventstest.Sink).Requests() }},
		"eventstest.Sink.SetFault":                  {func() { new(eventstest.Sink).SetFault(nil) }},
	}

	api := append(exportedAPI(t, ".", nil), exportedAPI(t, "eventstest", map[string][]string{"memSink": {"Sink", "SeriesSink"}})...)
	listed := map[string]bool{}
	for _, name := range api {
		listed[name] = true
		if _, ok := calls[name]; !ok {
			t.Errorf("%s is exported but TestNoPanics does not call it: add its zero and nil calls", name)
		}
	}
	for name := range calls {
		if !listed[name] {
			t.Errorf("TestNoPanics calls %s, which the source does not export", name)
		}
	}
	for _, name := range api {
		for i, call := range calls[name] {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s (call %d) panicked: %v", name, i+1, r)
					}
				}()
				call()
			}()
		}
	}
}
