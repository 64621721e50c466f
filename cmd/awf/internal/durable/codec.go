package durable

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// casThreshold is the payload size above which a payload is kept outside the history.
const casThreshold = 16 << 10

// casEncoding marks a payload that is a reference into the content-addressed store.
const casEncoding = "binary/awf-cas"

// casCodec keeps large payloads (tool outputs, model conversations, step scopes) out of the
// workflow history: the payload goes to dir under its SHA-256, and the history carries the
// digest. Workers and submitters of one deployment must share dir (AWF_TEMPORAL_STORE).
type casCodec struct{ dir string }

var _ converter.PayloadCodec = casCodec{}

// Encode replaces every payload larger than casThreshold by its reference.
func (c casCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if proto.Size(p) <= casThreshold {
			out[i] = p
			continue
		}
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		name := digest(b)
		if err := c.put(name, b); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(casEncoding)}, Data: []byte(name)}
	}
	return out, nil
}

// Decode restores referenced payloads from the store.
func (c casCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != casEncoding {
			out[i] = p
			continue
		}
		name := string(p.GetData())
		if len(name) != sha256.Size*2 {
			return nil, fmt.Errorf("payload reference %q: not a SHA-256", name)
		}
		path := filepath.Join(c.dir, name)
		b, err := os.ReadFile(path)
		if err == nil {
			touch(path) // in use: kept by the retention sweep (see sweep)
		}
		if err != nil {
			return nil, fmt.Errorf("payload %s: %w (is AWF_TEMPORAL_STORE shared by every worker?)", name, err)
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(b, &q); err != nil {
			return nil, fmt.Errorf("payload %s: %w", name, err)
		}
		out[i] = &q
	}
	return out, nil
}

// put writes b under name once, atomically. A payload already there is touched instead: in
// use again, the retention sweep keeps it (one that the sweep has just taken away is
// written again).
func (c casCodec) put(name string, b []byte) error {
	path := filepath.Join(c.dir, name)
	if touch(path) == nil {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("payload store: %w", err)
	}
	tmp, err := os.CreateTemp(c.dir, name+".*")
	if err != nil {
		return fmt.Errorf("payload store: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("payload store: %w", err)
	}
	return nil
}

// storeDir is the payload store: AWF_TEMPORAL_STORE, else payloads/ beside the state
// directory.
func storeDir(f *cmdutil.Factory) string {
	if d := f.Getenv("AWF_TEMPORAL_STORE"); d != "" {
		return d
	}
	cfg, err := f.Config()
	if err != nil {
		return filepath.Join(".awf", "payloads")
	}
	return filepath.Join(filepath.Dir(cfg.StateDir), "payloads")
}

// payloadDir is storeDir made absolute (workers and submitters may change directory).
func payloadDir(f *cmdutil.Factory) string {
	dir, err := filepath.Abs(storeDir(f))
	if err != nil {
		return storeDir(f)
	}
	return dir
}

// dataConverter is the SDK's JSON converter behind the content-addressed store.
func dataConverter(f *cmdutil.Factory) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), casCodec{dir: payloadDir(f)})
}
