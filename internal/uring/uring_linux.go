//go:build linux && (amd64 || arm64)

package uring

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (linux/io_uring.h) this package uses.
const (
	sysSetup    = 425 // io_uring_setup, the same number on every architecture
	sysEnter    = 426
	sysRegister = 427

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	featSingleMmap  = 1 << 0
	registerEventfd = 4
	opFsync         = 3
	fsyncDatasync   = 1
	sqeAsync        = 1 << 4 // IOSQE_ASYNC: straight to a worker

	sqeBytes = 64
	cqeBytes = 16
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// ring is one io_uring with a single submission entry, used by one sync
// at a time.
type ring struct {
	fd      int
	event   *os.File        // the eventfd completions are signalled on (non-blocking, polled)
	eventRC syscall.RawConn // event's descriptor, read without a blocking system call
	drain   func(uintptr) bool
	sqRing  []byte
	cqRing  []byte
	sqes    []byte
	sqTail  *uint32
	sqMask  uint32
	sqArray *uint32 // entry 0 of the index array
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    unsafe.Pointer
}

// pool hands out rings: free holds idle ones; made counts those created.
// Once io_uring is given up (a ring cannot be set up, or one stopped
// taking submissions), off is closed and why says why, for good.
type pool struct {
	mu      sync.Mutex
	free    chan *ring
	made    int // guarded by mu
	off     chan struct{}
	offOnce sync.Once
	why     error // set before off is closed
}

var rings = &pool{free: make(chan *ring, MaxRings), off: make(chan struct{})}

// Fdatasync makes the written data of f durable, as fdatasync(2), waiting
// for it in the network poller. It returns an error wrapping
// errors.ErrUnsupported when io_uring cannot be used here (then the
// caller syncs f itself); any other error is the sync's.
func Fdatasync(f *os.File) error {
	r, err := rings.get()
	if err != nil {
		return err
	}
	err = r.fdatasync(f)
	if errors.Is(err, errRingBroken) {
		r.close()
		return rings.giveUp(err)
	}
	rings.put(r)
	return err
}

// errRingBroken marks a ring that can no longer be trusted (a submission
// the kernel did not take, an eventfd that cannot be read).
var errRingBroken = errors.New("io_uring submission failed")

// get returns an idle ring, a new one while fewer than MaxRings exist, or
// waits for one; once io_uring is given up it returns why.
func (p *pool) get() (*ring, error) {
	select {
	case <-p.off:
		return nil, p.why
	case r := <-p.free:
		return r, nil
	default:
	}
	p.mu.Lock()
	if p.made < MaxRings {
		p.made++
		p.mu.Unlock()
		r, err := newRing()
		if err != nil {
			return nil, p.giveUp(err)
		}
		return r, nil
	}
	p.mu.Unlock()
	select {
	case <-p.off:
		return nil, p.why
	case r := <-p.free:
		return r, nil
	}
}

func (p *pool) put(r *ring) { p.free <- r }

// giveUp turns io_uring off for the process (the first cause wins) and
// returns the error every caller gets from then on.
func (p *pool) giveUp(cause error) error {
	p.offOnce.Do(func() {
		p.why = fmt.Errorf("%w: io_uring: %w", errors.ErrUnsupported, cause)
		close(p.off)
	})
	<-p.off
	return p.why
}

func newRing() (*ring, error) {
	var pr params
	fd, _, errno := syscall.RawSyscall(sysSetup, 1, uintptr(unsafe.Pointer(&pr)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("setup: %w", errno)
	}
	r := &ring{fd: int(fd)}
	fail := func(what string, err error) (*ring, error) {
		r.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sqSize := int(pr.sqOff.array + pr.sqEntries*4)
	cqSize := int(pr.cqOff.cqes + pr.cqEntries*cqeBytes)
	if pr.features&featSingleMmap == 0 {
		return fail("setup", errors.New("kernel without IORING_FEAT_SINGLE_MMAP"))
	}
	size := max(sqSize, cqSize)
	m, err := unix.Mmap(r.fd, offSQRing, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fail("map rings", err)
	}
	r.sqRing, r.cqRing = m, m
	if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(pr.sqEntries)*sqeBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail("map entries", err)
	}
	r.sqTail = (*uint32)(unsafe.Pointer(&r.sqRing[pr.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&r.sqRing[pr.sqOff.ringMask]))
	r.sqArray = (*uint32)(unsafe.Pointer(&r.sqRing[pr.sqOff.array]))
	r.cqHead = (*uint32)(unsafe.Pointer(&r.cqRing[pr.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&r.cqRing[pr.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&r.cqRing[pr.cqOff.ringMask]))
	r.cqes = unsafe.Pointer(&r.cqRing[pr.cqOff.cqes])

	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fail("eventfd", err)
	}
	r.event = os.NewFile(uintptr(efd), "io_uring eventfd")
	if r.eventRC, err = r.event.SyscallConn(); err != nil {
		return fail("eventfd", err)
	}
	r.drain = drainEventfd
	e := int32(efd)
	if _, _, errno := syscall.RawSyscall6(sysRegister, uintptr(r.fd), registerEventfd, uintptr(unsafe.Pointer(&e)), 1, 0, 0); errno != 0 {
		return fail("register eventfd", errno)
	}
	return r, nil
}

func (r *ring) close() {
	if r.event != nil {
		r.event.Close()
	}
	if r.sqes != nil {
		unix.Munmap(r.sqes)
	}
	if r.sqRing != nil {
		unix.Munmap(r.sqRing)
	}
	syscall.Close(r.fd)
}

// fdatasync queues one data sync of f and waits for its completion.
func (r *ring) fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var submitErr error
	// The kernel takes its own reference to the file at submission, so
	// holding f's descriptor for the submission alone is enough.
	if err := rc.Control(func(fd uintptr) { submitErr = r.submit(int32(fd)) }); err != nil {
		return err
	}
	if submitErr != nil {
		return submitErr
	}
	res, err := r.wait()
	if err != nil {
		return err
	}
	if res < 0 {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: syscall.Errno(-res)}
	}
	return nil
}

func (r *ring) submit(fd int32) error {
	tail := atomic.LoadUint32(r.sqTail)
	sqe := r.sqes[:sqeBytes]
	clear(sqe)
	sqe[0] = opFsync
	sqe[1] = sqeAsync
	*(*int32)(unsafe.Pointer(&sqe[4])) = fd
	*(*uint32)(unsafe.Pointer(&sqe[28])) = fsyncDatasync
	atomic.StoreUint32((*uint32)(unsafe.Add(unsafe.Pointer(r.sqArray), 4*(tail&r.sqMask))), 0)
	atomic.StoreUint32(r.sqTail, tail+1)
	for {
		n, _, errno := syscall.RawSyscall6(sysEnter, uintptr(r.fd), 1, 0, 0, 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return fmt.Errorf("%w: %w", errRingBroken, errno)
		case n != 1:
			return fmt.Errorf("%w: %d entries taken", errRingBroken, n)
		}
		return nil
	}
}

// drainEventfd resets the eventfd's count; false (nothing signalled yet)
// parks the caller in the poller until it is readable.
func drainEventfd(fd uintptr) bool {
	var buf [8]byte
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), 8)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		return true // read, or an error the next check of the ring outlives
	}
}

// wait returns the result of the one queued request, parking on the
// eventfd until it has completed.
func (r *ring) wait() (int32, error) {
	for {
		head := atomic.LoadUint32(r.cqHead)
		if head != atomic.LoadUint32(r.cqTail) {
			cqe := unsafe.Add(r.cqes, uintptr(head&r.cqMask)*cqeBytes)
			res := *(*int32)(unsafe.Add(cqe, 8))
			atomic.StoreUint32(r.cqHead, head+1)
			return res, nil
		}
		if err := r.eventRC.Read(r.drain); err != nil {
			return 0, fmt.Errorf("%w: eventfd: %w", errRingBroken, err)
		}
	}
}
