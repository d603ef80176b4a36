package client

import "errors"

func errorsAsProtocol(err error) (*ProtocolError, bool) { return errors.AsType[*ProtocolError](err) }
