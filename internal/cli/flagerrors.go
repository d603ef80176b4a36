package cli

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// pflagInvalid matches pflag's message for a value that does not parse:
// `invalid argument "-5" for "-n, --count" flag: strconv.ParseUint: ...`.
var pflagInvalid = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag: `)

// flagError turns the flag-parsing error err of cmd into a usage error
// that names the flag, the value given and what the flag takes, e.g.
// `--count "-5": want a whole number from 0 to 18446744073709551615`.
func flagError(cmd *cobra.Command, err error) error {
	see := " (see '" + cmd.CommandPath() + " --help')"
	m := pflagInvalid.FindStringSubmatch(err.Error())
	if m == nil {
		return usagef("%v%s", err, see)
	}
	value, name := m[1], m[2]
	want := "a valid value"
	if f := cmd.Flags().Lookup(name); f != nil {
		want = flagWants(f.Value.Type())
	}
	return usagef("--%s %s: want %s%s", name, strconv.Quote(value), want, see)
}

// flagWants says what a flag of pflag type typ takes.
func flagWants(typ string) string {
	switch typ {
	case "int", "int64":
		return "a whole number"
	case "int8", "int16", "int32":
		return "a whole number of " + strings.TrimPrefix(typ, "int") + " bits"
	case "uint":
		return "a whole number from 0 to " + strconv.FormatUint(math.MaxUint, 10)
	case "uint8":
		return "a whole number from 0 to 255"
	case "uint16":
		return "a whole number from 0 to 65535"
	case "uint32":
		return "a whole number from 0 to " + strconv.FormatUint(math.MaxUint32, 10)
	case "uint64":
		return "a whole number from 0 to " + strconv.FormatUint(math.MaxUint64, 10)
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 500ms, 10s, 1m or 1h30m"
	}
	return "a valid " + typ
}
