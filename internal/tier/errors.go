package tier

import "errors"

// ErrRemoteRead marks a read of the remote tier that failed: the object
// store did not answer, or what it returned failed verification (the
// error names the object). No bytes of such a read are served.
var ErrRemoteRead = errors.New("tier: remote read failed")

// errDamaged marks bytes from the bucket that failed verification.
var errDamaged = errors.New("remote object damaged")

// errManifest marks a manifest that cannot be decoded.
var errManifest = errors.New("tier: damaged manifest")

// errSegmentGone: the segment being uploaded was removed meanwhile.
var errSegmentGone = errors.New("tier: segment removed during upload")
