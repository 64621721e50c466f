package doctor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

func TestDoctor(t *testing.T) {
	rep := sandbox.Probe().Without(sandbox.Layer("landlock"))
	for _, format := range []cmdutil.Format{cmdutil.FormatText, cmdutil.FormatJSON} {
		ios, _, out, _ := iostreams.Test()
		err := runDoctor(t.Context(), &Options{IO: ios, Probe: func() sandbox.Report { return rep }, Output: format})
		if err != nil {
			t.Fatal(err)
		}
		if format.JSON() {
			var got sandbox.Report
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Layers) == 0 {
				t.Errorf("json: %v, %s", err, out)
			}
			continue
		}
		if !strings.Contains(out.String(), "landlock") {
			t.Errorf("text report does not mention landlock:\n%s", out)
		}
	}
}
