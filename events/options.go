package events

// Options holds the options of every configurable type of the package, one field per type
// (docs/conventions.md section 1); each constructor takes its own field.
type Options struct {
	// Correlator configures a Correlator, and the correlator of each sink (NewCorrelator,
	// StartRecordingToSink, AddSink, NewSinkQueue).
	Correlator CorrelatorOptions
	// SinkQueue configures a SinkQueue (NewSinkQueue).
	SinkQueue SinkQueueOptions
	// Broadcaster configures a Broadcaster (NewBroadcaster).
	Broadcaster BroadcasterOptions
	// SeriesBroadcaster configures a SeriesBroadcaster (NewSeriesBroadcaster).
	SeriesBroadcaster SeriesBroadcasterOptions
	// Recorder configures a Recorder or a SeriesRecorder (NewRecorder).
	Recorder RecorderOptions
}

// DefaultOptions returns client-go v0.37.2's defaults for every type.
func DefaultOptions() Options {
	return Options{
		Correlator:        DefaultCorrelatorOptions(),
		SinkQueue:         DefaultSinkQueueOptions(),
		Broadcaster:       DefaultBroadcasterOptions(),
		SeriesBroadcaster: DefaultSeriesBroadcasterOptions(),
		Recorder:          DefaultRecorderOptions(),
	}
}

// Validate reports the first invalid field of o as an *OptionError (matching
// ErrInvalidOptions), its name prefixed with the type's field ("Broadcaster.Queue.QueueSize").
func (o Options) Validate() error {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"Correlator.", o.Correlator.Validate()},
		{"SinkQueue.", o.SinkQueue.Validate()},
		{"Broadcaster.", o.Broadcaster.Validate()},
		{"SeriesBroadcaster.", o.SeriesBroadcaster.Validate()},
	} {
		if oe, ok := c.err.(*OptionError); ok {
			p := *oe
			p.Field = c.name + p.Field
			return &p
		}
	}
	return nil
}
