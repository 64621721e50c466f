package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// No flag's help states a default that cobra then states again, differently: `awf tools parse
// --help` said "json (the default) or text (default text)".
func TestHelpStatesEachDefaultOnce(t *testing.T) {
	f := testFactory()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			shown := fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "[]"
			if shown && strings.Contains(fl.Usage, "default") {
				t.Errorf("%s --%s: the usage %q states a default and cobra adds (default %s)", c.CommandPath(), fl.Name, fl.Usage, fl.DefValue)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(f))
}
