package cli

import (
	"context"
	"log/slog"
	"slices"
)

// uniqueKeys is a slog.Handler that gives every key of a log line once. slog's handlers write
// each attribute as given, so a key set by Logger.With and again at the call (the run's
// "workflow", say) appears twice: a JSON line with a duplicate key, which most JSON readers
// resolve silently and differently. Here the call's value wins, at the key's first place; a key
// that is one of the handler's own (time, level, msg, source) is written as attr_KEY.
type uniqueKeys struct {
	inner slog.Handler
	// attrs are the With attributes of the current group, kept back so that the record's own
	// can replace them; groups already opened were passed to inner with their attributes.
	attrs []slog.Attr
	// top is true while no group is open: the handler's own keys share that level.
	top bool
}

func newUniqueKeys(inner slog.Handler) slog.Handler { return &uniqueKeys{inner: inner, top: true} }

func (h *uniqueKeys) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *uniqueKeys) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &uniqueKeys{inner: h.inner, attrs: append(slices.Clip(h.attrs), attrs...), top: h.top}
}

func (h *uniqueKeys) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	inner := h.inner
	if len(h.attrs) > 0 {
		inner = inner.WithAttrs(unique(h.attrs, h.top))
	}
	return &uniqueKeys{inner: inner.WithGroup(name)}
}

func (h *uniqueKeys) Handle(ctx context.Context, r slog.Record) error {
	attrs := slices.Clip(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(unique(attrs, h.top)...)
	return h.inner.Handle(ctx, out)
}

// reserved are the keys slog's handlers write themselves at the top level.
var reserved = map[string]bool{slog.TimeKey: true, slog.LevelKey: true, slog.MessageKey: true, slog.SourceKey: true}

// unique returns attrs with each key once: a later value replaces an earlier one in its place.
// Groups with an empty key are inlined (slog writes their attributes at this level), groups
// are made unique inside, and attributes that slog drops (empty key, empty group) are
// dropped. At the top level, a reserved key is renamed attr_KEY.
func unique(attrs []slog.Attr, top bool) []slog.Attr {
	var out []slog.Attr
	at := map[string]int{}
	var add func(a slog.Attr)
	add = func(a slog.Attr) {
		a.Value = a.Value.Resolve()
		if a.Value.Kind() == slog.KindGroup {
			members := a.Value.Group()
			if a.Key == "" {
				for _, m := range members {
					add(m)
				}
				return
			}
			if members = unique(members, false); len(members) == 0 {
				return
			}
			a.Value = slog.GroupValue(members...)
		}
		if a.Key == "" {
			return
		}
		if top && reserved[a.Key] {
			a.Key = "attr_" + a.Key
		}
		if i, ok := at[a.Key]; ok {
			out[i] = a
			return
		}
		at[a.Key] = len(out)
		out = append(out, a)
	}
	for _, a := range attrs {
		add(a)
	}
	return out
}
