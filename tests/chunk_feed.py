#!/usr/bin/env python3
"""chunk_feed.py: writes files into named pipes in chunks of set sizes, one
chunk per read(2) of the reader.

Usage: chunk_feed.py MANIFEST
       chunk_feed.py --follow FILE SPEC SRC

MANIFEST has a line "SPEC<tab>SRC<tab>FIFO" per file (names may hold
blanks and colons).  For each line in turn, SRC is written into FIFO (which
must exist) in chunks whose sizes SPEC gives:

  1, 7, 4097, ...   every chunk that many bytes;
  lines:N           N lines a chunk;
  rand:SEED         sizes drawn from a fixed-seed generator (random.Random),
                    log-uniform between 1 and 16384 bytes, so that chunks
                    end everywhere: inside lines, words and anchors.

The reader sees each chunk in a read of its own, by construction: the FIFO
is opened read-write (so that its reader, which may open it later, is not
refused and sees the end only when this closes it), and after each write
this waits until the pipe is empty again (FIONREAD), so that no read can
take the bytes of two chunks together.  A chunk of up to the pipe's
capacity goes in with one write(2).

--follow FILE SPEC SRC: instead, appends SRC to FILE (a plain file that
`oomdoc --follow` reads) in SPEC's chunks, pausing PAUSE_MS milliseconds
(environment, default 0) after each, then exits.

Prints the number of chunks written, on standard error.
"""
import array
import fcntl
import os
import random
import sys
import termios
import time


def sizes(spec, data=b""):
    """The chunk sizes that spec names, an endless sequence."""
    if spec.startswith("lines:"):
        n = int(spec[6:])
        at = 0
        while True:
            end = at
            for _ in range(n):
                nl = data.find(b"\n", end)
                end = len(data) if nl < 0 else nl + 1
            yield max(1, end - at)
            at = end
    if spec.startswith("rand:"):
        rng = random.Random(int(spec[5:]))
        while True:
            yield max(1, int(2 ** rng.uniform(0, 14)))
    n = int(spec)
    while True:
        yield n


def unread(fd):
    """The bytes in the pipe that its reader has not read yet."""
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf, True)
    return buf[0]


def drain(fd):
    """Waits until the reader has read everything written so far; an
    error after 30 s without a read (the reader is gone: the pipe, open
    here for reading too, never says so)."""
    spins = 0
    left = unread(fd)
    since = None
    while left > 0:
        spins += 1
        if spins < 200:
            os.sched_yield()
        else:
            time.sleep(0.0002)
        now = unread(fd)
        if now < left:
            left, since = now, None
        elif since is None:
            since = time.monotonic()
        elif time.monotonic() - since > 30:
            raise SystemExit("chunk_feed: no read for 30 s")


def feed_pipe(spec, src, fifo):
    data = open(src, "rb").read()
    fd = os.open(fifo, os.O_RDWR)
    count = 0
    try:
        at = 0
        for n in sizes(spec):
            if at >= len(data):
                break
            chunk = data[at:at + n]
            # Empty before the write: this chunk is all the reader can see.
            assert unread(fd) == 0
            done = 0
            while done < len(chunk):
                done += os.write(fd, chunk[done:])
            at += len(chunk)
            count += 1
            drain(fd)
    finally:
        os.close(fd)
    return count


def feed_file(spec, src, path, pause):
    data = open(src, "rb").read()
    count = 0
    at = 0
    with open(path, "ab", buffering=0) as out:
        for n in sizes(spec, data):
            if at >= len(data):
                break
            out.write(data[at:at + n])
            at += n
            count += 1
            if pause > 0:
                time.sleep(pause)
    return count


def main(argv):
    total = 0
    if len(argv) == 4 and argv[0] == "--follow":
        pause = int(os.environ.get("PAUSE_MS", "0")) / 1000.0
        total = feed_file(argv[2], argv[3], argv[1], pause)
    elif len(argv) == 1:
        with open(argv[0], encoding="utf-8") as m:
            for line in m:
                spec, src, fifo = line.rstrip("\n").split("\t")
                total += feed_pipe(spec, src, fifo)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print("chunk_feed: %d chunks" % total, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
