package httptool

import (
	"errors"
	"time"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Layers and rules of http_request's refusals, as the audit record shows them (see
// tool.Refusal).
const (
	layerURL     = "L1 URL check"
	layerIPGuard = "L1 connect-time IP guard"
	ruleHosts    = "sandbox.hosts"
	ruleURL      = "URL rules"
	ruleRequest  = "request rules"
	rulePrivate  = "no private addresses"
	ruleNever    = "never-allowed addresses"
)

// refusedf returns a refusal by the URL or request checks under rule.
func refusedf(rule, format string, args ...any) error {
	return tool.Refusef(layerURL, rule, format, args...)
}

// failure is an error result prefixed with the tool's name. A refusal by the URL and request
// checks or by the address guard is a tool.Refused result, which the governed path records as
// a denial with its layer and rule.
func failure(err error) tool.Result {
	msg := "http_request: " + err.Error()
	if r, ok := tool.AsRefused(err, msg); ok {
		return r
	}
	if b, ok := errors.AsType[*BlockedError](err); ok {
		rule := rulePrivate
		if b.Always {
			rule = ruleNever
		}
		return tool.Refused(layerIPGuard, rule, msg)
	}
	return tool.Errorf(msg)
}

// describedError is a client error in words the model can act on (describe), still carrying
// the error for failure to classify.
type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

// described wraps a client error of the request what.
func described(what string, err error, timeout time.Duration) error {
	return &describedError{msg: what + ": " + describe(err, timeout), err: err}
}
