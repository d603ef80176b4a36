package client

import "errors"

func errorsAsProtocol(err error) (*ProtocolError, bool) { return errors.AsType[*ProtocolError](err) }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
