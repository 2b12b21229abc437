"""FindBoundary on inverse one-hot records seen as grid cells (paper, section 3.1, Alg. 1-2, H1).

With inverse one-hot data every record is one cell of the grid of bins, and the current element
``p`` of FindBoundaryPoint is a *box*: the bins it allows on each feature (its zeros). Flipping
bit ``(f, v)`` (allowing bin ``v`` of feature ``f``) creates a conflict iff a negative lies in
bin ``v`` of ``f`` and inside the box on every other feature.

Each record gets an integer cell key (mixed radix, feature 0 most significant), and the
negatives of every bin are kept sorted by key. The negatives of one bin whose first ``k``
features take given bins then form one contiguous run, so "is there a negative of bin ``v`` of
``f`` inside the box?" is a depth-first search that splits the run feature by feature into the
allowed bins only (two binary searches per allowed bin), drops empty runs at once and checks
short runs record by record. It visits only the non-empty prefixes of the box instead of every
negative of the bin, and no per-negative distance is kept, so the cost of a seed no longer
grows with the number of negatives. The positives a new point covers (and the older points it
makes redundant: their seeds lie in its box) are found by the same search over all positives.
A record is read as a packed one-hot row (its misses against the box: a popcount), and the
exhaustive search of a flip that is made notes the bits its negatives block from then on, so
those are never searched for the rest of the seed.

This is the same algorithm as :func:`libre_lib.weak_learner.find_boundary` with ``H1`` and
``seeds="uncovered"`` and returns exactly the same points (tests compare them); only the data
structures differ. Inside a group of tied H1 keys the exact minimum distance of a bit is still
needed; it is computed by scanning that bit's negatives.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import ZeroSets

_UNDEFINED = np.iinfo(np.int64).max // 4
_MAX_KEY = 2**62
_SHORT_RUN = 32
_DIRECTORY = 4096
#: How many standard errors above the tolerance a flip's own records may be before the flip
#: is refused (:func:`slab_over_tolerance`): three, the usual "clearly not noise" level.
SLAB_STANDARD_ERRORS = 3.0


def cell_layout(blocks: np.ndarray) -> np.ndarray | None:
    """Radix of every feature in the cell key ``sum(code_f * radix_f)`` (feature 0 most
    significant), or None when the grid has too many cells for an int64 key."""
    n_bins = np.diff(np.asarray(blocks, dtype=np.int64))
    radix = np.ones(n_bins.size, dtype=np.int64)
    span = 1
    for f in range(n_bins.size - 1, -1, -1):
        radix[f] = span
        span *= int(n_bins[f])
        if span >= _MAX_KEY:
            return None
    return radix


def codes_of(zeros: ZeroSets, n_features: int) -> np.ndarray:
    """Bin code per feature (rows x features) of inverse one-hot zero sets."""
    if zeros.n_rows == 0:
        return np.zeros((0, n_features), dtype=np.int32)
    flat = zeros.indices.reshape(zeros.n_rows, n_features)
    return (flat - zeros.blocks[:-1][None, :]).astype(np.int32)


def one_hot(codes: np.ndarray, blocks: np.ndarray, levels: int = 0) -> np.ndarray:
    """Every record's bins as a bit row, packed in uint64 words and stored word-major
    (words x records): a record's misses against a box are ``popcount(row & outside)``.

    Bit ``b = blocks[f] + code_f`` sits at position ``rotate(b)``: the bits of the features a
    directory of ``levels`` digits resolves come last, so a search below the directory reads
    only the first words of each record (see :func:`_rotate`)."""
    n, m = codes.shape
    n_bits = int(blocks[-1])
    n_words = max(1, (n_bits + 63) // 64)
    words = np.zeros((n_words, n), dtype=np.uint64)
    at = np.arange(n)
    start = int(blocks[levels])
    for f in range(m):
        bit = (int(blocks[f]) - start + codes[:, f].astype(np.int64)) % max(n_bits, 1)
        words[bit >> 6, at] |= np.left_shift(np.uint64(1), (bit & 63).astype(np.uint64))
    return words


@njit(cache=True, nogil=True)
def _rotate(b, start, n_bits):
    """Position of bit ``b`` in the one-hot rows and boxes: ``b - start`` modulo ``n_bits``
    (``start`` = the first bit below the directory's features)."""
    return b - start if b >= start else b + n_bits - start


@njit(cache=True, nogil=True)
def _unrotate(r, start, n_bits):
    return r + start if r < n_bits - start else r - (n_bits - start)


@njit(cache=True, nogil=True)
def _word_and_bit(b, start, n_bits):
    """Word index and single-bit mask of bit ``b`` in the rotated rows and boxes."""
    r = _rotate(b, start, n_bits)
    return r >> 6, np.uint64(1) << np.uint64(r & 63)


@njit(cache=True, nogil=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


def cell_keys(codes: np.ndarray, radix: np.ndarray) -> np.ndarray:
    """The cell key of every record (rows of bin codes)."""
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return (codes.astype(np.int64) * radix[None, :]).sum(axis=1)


def directory_levels(blocks: np.ndarray, n_records: int) -> int:
    """How many leading features the directories resolve: the most whose bins multiply to no
    more prefixes than a bit has records on average (a finer directory would mostly point at
    empty runs), within ``_DIRECTORY`` prefixes per bit."""
    n_bins = np.diff(np.asarray(blocks, dtype=np.int64))
    per_bit = n_records * n_bins.size / max(int(n_bins.sum()), 1)
    limit = min(_DIRECTORY, max(64, per_bit))
    levels, size = 0, 1
    while levels < n_bins.size - 1 and size * n_bins[levels] <= limit:
        size *= int(n_bins[levels])
        levels += 1
    return levels


def _directory(keys: np.ndarray, lo: int, radix: np.ndarray, blocks: np.ndarray, levels: int):
    """Start (absolute position) of every prefix of the first ``levels`` digits in the sorted
    ``keys``, then the end."""
    if levels == 0:
        return np.array([lo, lo + keys.size], dtype=np.int64)
    return lo + np.searchsorted(keys, _prefix_starts(radix, blocks, levels)).astype(np.int64)


def _prefix_starts(radix: np.ndarray, blocks: np.ndarray, levels: int) -> np.ndarray:
    """The smallest cell key of every prefix of the first ``levels`` digits, then the end."""
    size = int(np.prod(np.diff(blocks)[:levels]))
    return np.arange(size + 1, dtype=np.int64) * radix[levels - 1]


def positive_runs(codes: np.ndarray, blocks: np.ndarray, radix: np.ndarray, levels: int):
    """Records (here: the positives) sorted by cell key: (keys, rows, their one-hot rows,
    directory)."""
    keys = cell_keys(codes, radix)
    rows = np.argsort(keys, kind="stable").astype(np.int64)
    keys = keys[rows]
    onehot = np.ascontiguousarray(one_hot(codes, blocks, levels)[:, rows])
    return keys, rows, onehot, _directory(keys, 0, radix, blocks, levels)


def sorted_runs(codes: np.ndarray, blocks: np.ndarray, radix: np.ndarray, levels: int):
    """Per bit (CSR over ``blocks``), the records with a zero there sorted by cell key, with
    their one-hot rows (copied in that order, so runs are read contiguously) and each bit's
    directory: (bit_ptr, bit_rows, bit_keys, bit_onehot, directories, levels)."""
    n, m = codes.shape
    keys = cell_keys(codes, radix)
    bits = (codes + blocks[:-1][None, :]).ravel()
    rows = np.repeat(np.arange(n, dtype=np.int64), m)
    order = np.lexsort((keys[rows], bits))
    counts = np.bincount(bits, minlength=int(blocks[-1]))
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    bit_rows = rows[order]
    bit_keys = keys[bit_rows]
    bit_onehot = np.ascontiguousarray(one_hot(codes, blocks, levels)[:, bit_rows])
    if levels == 0:
        directories = np.column_stack((ptr[:-1], ptr[1:]))
    else:
        directories = _bit_directories(bit_keys, ptr, _prefix_starts(radix, blocks, levels))
    return ptr, bit_rows, bit_keys, bit_onehot, directories, levels


@njit(cache=True, nogil=True)
def _bit_directories(bit_keys, ptr, starts):
    """:func:`_directory` of every bit's run at once (rows: bits; wide data has thousands)."""
    out = np.empty((ptr.size - 1, starts.size), dtype=np.int64)
    for b in range(ptr.size - 1):
        lo, hi = ptr[b], ptr[b + 1]
        for i in range(starts.size):  # starts ascend: each search begins where the last ended
            lo = _lower(bit_keys, lo, hi, starts[i])
            out[b, i] = lo
    return out


@njit(cache=True, nogil=True)
def _lower(keys, lo, hi, key):
    """First position in ``keys[lo:hi]`` (sorted) whose key is >= ``key``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _new_stack(depth, m):
    """Work stack of :func:`_search`: ``depth`` + 1 entries of (lo, hi, depth, prefix, misses
    left), plus a last row reserved as the odometer of the directory's digits."""
    return np.empty((depth + 2, max(5, m)), dtype=np.int64)


@njit(cache=True, nogil=True)
def _push(stack, top, lo, hi, depth, prefix, left):
    stack[top, 0] = lo
    stack[top, 1] = hi
    stack[top, 2] = depth
    stack[top, 3] = prefix
    stack[top, 4] = left
    return top + 1


@njit(cache=True, nogil=True)
def _search(
    f, v, keys, rows, onehot, lo, hi, budget, box, radix, directory, levels, stack, out, marks
):
    """Records of ``rows[lo:hi]`` (sorted by cell ``keys``) that lie outside the box on at most
    ``budget`` features other than ``f`` (``f = -1``: any feature; ``f >= 0``: every record is
    in bin ``v`` of ``f``). Depth-first over the key digits, following only the bins that keep
    the misses within the budget; runs of a few records are checked one by one. The first
    ``levels`` digits are resolved by ``directory`` (start of every top-digit prefix) instead
    of binary searches. With an empty ``out`` it stops at the first such record and returns its
    position + 1 (0: none); otherwise it stores all of them in ``out`` and returns their
    number.

    A record's misses are counted on its one-hot row: ``popcount(row & outside)`` without
    the bit being tested. Below the directory with no miss allowed, the directory's features
    are inside the box by construction, so only the words of the other features are read.

    ``marks`` = (list, flags, ...): when the list is not empty (a budget-0 test), every record read
    that misses the box on exactly one feature is noted by the bit it lies in (once: ``flags``),
    list[0] = how many. If the flip is then made, each such record lies in the box everywhere
    but there for the rest of the seed, so that bit is blocked."""
    allowed, allowed_list, n_allowed, outside, blocks, start = box
    m = radix.size
    n_bits = blocks[m]
    n_words = outside.size
    tail_words = max(1, (n_bits - start + 63) >> 6)  # the words of the features below
    collect = out.size > 0
    mark_list, mark_flags = marks[0], marks[1]
    mark = mark_list.size > 0 and budget == 0 and not collect
    tested_word = -1
    tested_mask = np.uint64(0)
    if f >= 0:
        tested_word, tested_bit = _word_and_bit(blocks[f] + v, start, n_bits)
        tested_mask = ~tested_bit
    found = 0
    top = 0
    if budget == 0 and levels > 0:
        # every allowed prefix of the first ``levels`` digits, by odometer
        unit = radix[levels - 1]
        idx = stack[stack.shape[0] - 1, :levels]  # the reserved last row: no allocation
        idx[:] = 0
        while True:
            j = 0
            for g in range(levels):
                code = v if g == f else allowed_list[g, idx[g]]
                j += code * (radix[g] // unit)
            a, b = directory[j], directory[j + 1]
            if b > a:
                top = _push(stack, top, a, b, levels, j * unit, 0)
            g = levels - 1
            while g >= 0:
                if g != f and idx[g] + 1 < n_allowed[g]:
                    idx[g] += 1
                    break
                idx[g] = 0
                g -= 1
            if g < 0:
                break
    else:
        top = _push(stack, top, lo, hi, 0, 0, budget)
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        d = stack[top, 2]
        prefix = stack[top, 3]
        left = stack[top, 4]
        if hi - lo <= _SHORT_RUN or d == m:
            limit = 1 if mark else budget  # ``budget - left`` misses are in the prefix
            n_read = tail_words if budget == 0 and d >= levels else n_words
            for t in range(lo, hi):
                misses = 0
                missed = -1
                for w in range(n_read):
                    x = onehot[w, t] & outside[w]
                    if w == tested_word:
                        x &= tested_mask
                    if x:
                        c = _popcount(x)
                        misses += c
                        if misses > limit:
                            break
                        missed = w * 64 + _popcount(x - np.uint64(1))  # its bit, if c == 1
                if misses > limit:
                    continue
                if misses <= budget:
                    if not collect:
                        return t + 1
                    out[found] = rows[t]
                    found += 1
                else:  # mark: exactly one miss
                    missed = _unrotate(missed, start, n_bits)
                    if not mark_flags[missed]:
                        mark_flags[missed] = True
                        mark_list[0] += 1
                        mark_list[mark_list[0]] = missed
            continue
        step = radix[d]
        if d == f:  # every record of the run is in the bin being tested
            top = _push(stack, top, lo, hi, d + 1, prefix + v * step, left)
        elif left == 0:
            for i in range(n_allowed[d]):
                low_key = prefix + allowed_list[d, i] * step
                a = _lower(keys, lo, hi, low_key)
                if a < hi and keys[a] < low_key + step:
                    top = _push(
                        stack, top, a, _lower(keys, a, hi, low_key + step), d + 1, low_key, 0
                    )
        else:
            a = lo
            while a < hi:  # every bin present in the run, in key order
                code = (keys[a] - prefix) // step
                low_key = prefix + code * step
                b = _lower(keys, a, hi, low_key + step)
                top = _push(
                    stack, top, a, b, d + 1, low_key, left if allowed[d, code] else left - 1
                )
                a = b
    return found


@njit(cache=True, nogil=True)
def _slab_min_distance(b, lo, hi, onehot, box, floor):
    """min over the negatives of bit ``b`` of d(p, y) = 1 + #{g != f : y_g not allowed}; the
    scan stops as soon as the minimum is known to be <= ``floor``."""
    if lo == hi:
        return _UNDEFINED
    outside, blocks, start = box[3], box[4], box[5]
    tested_word, tested_bit = _word_and_bit(b, start, blocks[-1])
    tested_mask = ~tested_bit
    best = _UNDEFINED
    for t in range(lo, hi):
        d = 1
        for w in range(outside.size):
            x = onehot[w, t] & outside[w]
            if w == tested_word:
                x &= tested_mask
            d += _popcount(x)
            if d >= best:
                break
        if d < best:
            best = d
            if d <= floor:
                return best
    return best


@njit(cache=True, nogil=True)
def _check(f, b, v, runs, budget, box, radix, stack, marks):
    """Is a negative of bit ``b`` (bin ``v`` of ``f``) within ``budget`` misses of the box?
    (``marks``: see :func:`_search`.)"""
    bit_ptr, bit_rows, bit_keys, onehot, directory, levels = runs
    lo, hi = bit_ptr[b], bit_ptr[b + 1]
    if lo == hi:
        return False
    return (
        _search(
            f,
            v,
            bit_keys,
            bit_rows,
            onehot,
            lo,
            hi,
            budget,
            box,
            radix,
            directory[b],
            levels,
            stack,
            stack[0, :0],  # empty: stop at the first record
            marks,
        )
        > 0
    )


@njit(cache=True, nogil=True)
def _min_distance(f, b, v, runs, box, radix, stack, floor, marks):
    """Exact min distance of an unblocked bit (>= 2), or a value <= ``floor`` once it is known
    to be at most that: searches with 1 and 2 misses first, then scans the bin."""
    bit_ptr, _, _, onehot, _, _ = runs
    if bit_ptr[b] == bit_ptr[b + 1]:
        return _UNDEFINED
    for budget in range(1, 3):
        if _check(f, b, v, runs, budget, box, radix, stack, marks):
            return 1 + budget
    return _slab_min_distance(b, bit_ptr[b], bit_ptr[b + 1], onehot, box, floor)


@njit(cache=True, nogil=True)
def _allow(f, v, box):
    allowed, allowed_list, n_allowed, outside, blocks, start = box
    allowed[f, v] = True
    allowed_list[f, n_allowed[f]] = v
    n_allowed[f] += 1
    word, bit = _word_and_bit(blocks[f] + v, start, blocks[-1])
    outside[word] &= ~bit


@njit(cache=True, nogil=True)
def _new_box(blocks, levels):
    """An empty box over the grid of ``blocks``: (allowed, allowed_list, n_allowed, outside
    (the bits not allowed, packed and rotated as the one-hot rows of a directory of
    ``levels`` digits), blocks, the rotation's start)."""
    m = blocks.size - 1
    max_bins = 0
    for f in range(m):
        max_bins = max(max_bins, blocks[f + 1] - blocks[f])
    n_words = max(1, (blocks[m] + 63) // 64)
    return (
        np.zeros((m, max_bins), dtype=np.bool_),
        np.zeros((m, max_bins), dtype=np.int64),
        np.zeros(m, dtype=np.int64),
        np.zeros(n_words, dtype=np.uint64),
        blocks,
        blocks[levels],
    )


@njit(cache=True, nogil=True)
def _clear_box(box):
    """Allow nothing: every bit outside."""
    allowed, allowed_list, n_allowed, outside, blocks, _ = box
    for f in range(n_allowed.size):
        for i in range(n_allowed[f]):
            allowed[f, allowed_list[f, i]] = False
        n_allowed[f] = 0
    outside[:] = 0
    for b in range(blocks[-1]):
        outside[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


@njit(cache=True, nogil=True)
def _slab_weight(f, b, v, runs, row_weight, box, radix, stack, out, marks):
    """Weight of the records of bit ``b`` (bin ``v`` of ``f``) inside the box elsewhere."""
    bit_ptr, bit_rows, bit_keys, onehot, directory, levels = runs
    lo, hi = bit_ptr[b], bit_ptr[b + 1]
    if lo == hi:
        return 0.0
    n = _search(
        f,
        v,
        bit_keys,
        bit_rows,
        onehot,
        lo,
        hi,
        0,
        box,
        radix,
        directory[b],
        levels,
        stack,
        out,
        marks,
    )
    total = 0.0
    for i in range(n):
        total += row_weight[out[i]]
    return total


@njit(cache=True, nogil=True)
def slab_over_tolerance(neg, pos, tolerance):
    """Do a slab's own records show, beyond sampling noise, more negatives than the tolerance
    allows? Under "the slab's negatives are ``tolerance`` times its positives" its negative
    share is ``q = tolerance / (1 + tolerance)``; the slab is over when its negatives exceed
    ``q`` times its weight by more than :data:`SLAB_STANDARD_ERRORS` binomial standard errors
    (weights read as counts). Not in the paper: the grown box's own budget alone let a large,
    clean box absorb a whole bin that is mostly negative."""
    total = neg + pos
    q = tolerance / (1.0 + tolerance)
    excess = neg - q * total
    return excess > 0.0 and excess * excess > SLAB_STANDARD_ERRORS**2 * total * q * (1.0 - q)


@njit(cache=True, nogil=True)
def _tolerated(f, b, v, runs, box, radix, stack, tol, marks, commit=True):
    """Tolerant conflict test: may bit ``b`` be flipped? ``tol`` = (tolerance, negative and
    positive weight of the box, then the arrays it needs). The grown box must stay within the
    tolerance and the slab the flip adds must not be over it (:func:`slab_over_tolerance`).
    With ``commit`` a passing flip adds the slab's weights to the box's."""
    tolerance, mass, pos_bit_runs, neg_weight, pos_weight, out = (
        tol[0],
        tol[1],
        tol[2],
        tol[3],
        tol[4],
        tol[5],
    )
    neg = _slab_weight(f, b, v, runs, neg_weight, box, radix, stack, out, marks)
    pos = _slab_weight(f, b, v, pos_bit_runs, pos_weight, box, radix, stack, out, marks)
    ok = mass[0] + neg <= tolerance * (mass[1] + pos)
    ok = ok and not slab_over_tolerance(neg, pos, tolerance)
    if ok and commit:
        mass[0] += neg
        mass[1] += pos
    return ok


@njit(cache=True, nogil=True)
def _grow_h1(bits, bit_feature, blocks, s0, d0, runs, box, radix, stack, tol, marks):
    """FindBoundaryPoint with H1 from the current box (the seed's cell): visits the candidate
    bits in H1 order (|S0| desc, |D+0| desc, bit asc), flipping every bit that does not
    conflict; ties of the keys are decided by the distances, as in the generic kernel.

    ``marks`` = (list, flags, blocked): the test of a flip that is made notes the bits its
    negatives block from then on (:func:`_search`); ``blocked`` (reset per seed) skips their
    own tests."""
    mark_list, mark_flags, blocked = marks
    none = (mark_list[:0], mark_flags, blocked)
    n = bits.size
    order = np.argsort(-d0[bits], kind="mergesort")
    order = order[np.argsort(-s0[bits][order], kind="mergesort")]
    alive = np.zeros(n, dtype=np.bool_)
    g = 0
    while g < n:
        e = g + 1
        while (
            e < n
            and s0[bits[order[e]]] == s0[bits[order[g]]]
            and d0[bits[order[e]]] == d0[bits[order[g]]]
        ):
            e += 1
        if e == g + 1:
            b = bits[order[g]]
            f = bit_feature[b]
            if tol[0] > 0.0:
                if _tolerated(f, b, b - blocks[f], runs, box, radix, stack, tol, none):
                    _allow(f, b - blocks[f], box)
            elif not blocked[b]:
                mark_list[0] = 0
                free = not _check(f, b, b - blocks[f], runs, 0, box, radix, stack, marks)
                for i in range(1, mark_list[0] + 1):
                    mark_flags[mark_list[i]] = False
                    if free:
                        blocked[mark_list[i]] = True
                if free:
                    _allow(f, b - blocks[f], box)
        else:
            for j in range(g, e):
                alive[j] = True
            while True:
                best = -1
                best_dist = 0
                for j in range(g, e):
                    if not alive[j]:
                        continue
                    b = bits[order[j]]
                    f = bit_feature[b]
                    if tol[0] > 0.0:
                        if not _tolerated(
                            f, b, b - blocks[f], runs, box, radix, stack, tol, none, False
                        ):
                            alive[j] = False  # over the tolerance: kept
                            continue
                    elif blocked[b] or _check(
                        f, b, b - blocks[f], runs, 0, box, radix, stack, none
                    ):
                        alive[j] = False  # blocked: kept
                        continue
                    # members come in ascending bit order: a later one must beat best_dist
                    # strictly, so its search may stop at best_dist (it cannot win then)
                    if tol[0] > 0.0 and _check(
                        f, b, b - blocks[f], runs, 0, box, radix, stack, none
                    ):
                        d = 1
                    else:
                        d = _min_distance(
                            f,
                            b,
                            b - blocks[f],
                            runs,
                            box,
                            radix,
                            stack,
                            best_dist if best >= 0 else 1,
                            none,
                        )
                    if best < 0 or d > best_dist or (d == best_dist and b < bits[order[best]]):
                        best = j
                        best_dist = d
                if best < 0:
                    break
                alive[best] = False
                b = bits[order[best]]
                f = bit_feature[b]
                if tol[0] > 0.0:
                    _tolerated(f, b, b - blocks[f], runs, box, radix, stack, tol, none)
                _allow(f, b - blocks[f], box)
        g = e


@njit(cache=True, nogil=True)
def _cell_weight(codes_row, runs, row_weight, blocks, radix):
    """Weight of the record (of ``runs``) in the cell ``codes_row``, 0 if there is none."""
    bit_ptr, bit_rows, bit_keys, _, _, _ = runs
    key = 0
    for f in range(codes_row.size):
        key += np.int64(codes_row[f]) * radix[f]
    b = blocks[0] + codes_row[0]
    lo, hi = bit_ptr[b], bit_ptr[b + 1]
    total = 0.0
    t = _lower(bit_keys, lo, hi, key)
    while t < hi and bit_keys[t] == key:
        total += row_weight[bit_rows[t]]
        t += 1
    return total


@njit(cache=True, nogil=True)
def _contains(outer_allowed, inner, blocks):
    """Is the box of packed point ``inner`` (ones = excluded bins) inside ``outer_allowed``?"""
    for f in range(blocks.size - 1):
        for b in range(blocks[f], blocks[f + 1]):
            excluded = (inner[b >> 6] >> np.uint64(b & 63)) & np.uint64(1)
            if not excluded and not outer_allowed[f, b - blocks[f]]:
                return False
    return True


@njit(cache=True, nogil=True)
def find_boundary_cells(
    pos_codes,
    weight,
    order,
    pos_runs,
    neg_runs,
    blocks,
    radix,
    s0,
    d0,
    tolerance,
    pos_bit_runs,
    neg_weight,
):
    """Algorithm 1 with H1 and uncovered seeds; returns the boundary points (bool rows) and the
    weighted positives and negatives each one covers (points x 2).
    ``pos_runs`` = (keys, rows, codes, directory) of the positives sorted by key; ``neg_runs``
    = the negatives per zero bit sorted by key (:func:`sorted_runs`).

    With ``tolerance > 0`` a flip conflicts only when the negative weight of the grown box
    (records of the seed's own cell aside) would exceed ``tolerance`` times its positive
    weight, or when the records the flip adds are over the tolerance beyond sampling noise
    (:func:`slab_over_tolerance`); a seed whose own cell is over it in that sense grows by the
    paper's test. ``pos_bit_runs`` (the positives per zero bit) and ``neg_weight`` serve these
    tests. ``tolerance = 0`` is the paper's conflict test.
    """
    n_pos, m = pos_codes.shape
    n_bits = blocks[m]
    n_words = (n_bits + 63) // 64
    pos_keys, pos_rows, pos_onehot, pos_directory = pos_runs
    levels = neg_runs[5]
    max_bins = 0
    bit_feature = np.empty(n_bits, dtype=np.int64)
    for f in range(m):
        max_bins = max(max_bins, blocks[f + 1] - blocks[f])
        for b in range(blocks[f], blocks[f + 1]):
            bit_feature[b] = f
    stack = _new_stack(m * max_bins + pos_directory.size, m)
    box = _new_box(blocks, levels)
    allowed = box[0]
    bits = np.empty(n_bits - m, dtype=np.int64)
    uncovered = np.ones(n_pos, dtype=np.bool_)
    point_of_row = np.full(n_pos, -1, dtype=np.int64)
    capacity = 64
    packed = np.zeros((capacity, n_words), dtype=np.uint64)
    alive = np.zeros(capacity, dtype=np.bool_)
    cover = np.zeros((capacity, 2))  # weighted positives and negatives inside each point
    n_points = 0
    words = np.empty(n_words, dtype=np.uint64)
    inside = np.empty(max(n_pos, 1), dtype=np.int64)
    mass = np.zeros(2)
    tol = (
        float(tolerance),
        mass,
        pos_bit_runs,
        neg_weight,
        weight,
        np.empty(max(n_pos, neg_weight.size, 1), dtype=np.int64),
    )
    exact = (0.0, tol[1], tol[2], tol[3], tol[4], tol[5])
    total = np.zeros(n_bits)
    touched = np.zeros(n_bits, dtype=np.bool_)
    blocked = np.zeros(n_bits, dtype=np.bool_)
    marks = (np.zeros(1 + n_bits, dtype=np.int64), np.zeros_like(blocked), blocked)
    for k in order:
        if not uncovered[k]:
            continue
        # the seed's cell is the starting box
        _clear_box(box)
        for f in range(m):
            _allow(f, pos_codes[k, f], box)
        c = 0
        for f in range(m):
            for b in range(blocks[f], blocks[f + 1]):
                if b - blocks[f] != pos_codes[k, f]:
                    bits[c] = b
                    c += 1
        mass[0] = 0.0
        mass[1] = weight[k]
        blocked[:] = False
        grow = tol
        if tolerance > 0 and slab_over_tolerance(
            _cell_weight(pos_codes[k], neg_runs, neg_weight, blocks, radix), weight[k], tolerance
        ):
            grow = exact  # a contradiction, not a region: it grows by the paper's test
        _grow_h1(bits, bit_feature, blocks, s0, d0, neg_runs, box, radix, stack, grow, marks)
        words[:] = 0
        empty = True
        for f in range(m):
            for b in range(blocks[f], blocks[f + 1]):
                if not allowed[f, b - blocks[f]]:
                    words[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
                    empty = False
        if empty:
            continue  # an always-true element is no rule
        if n_points == capacity:
            capacity *= 2
            grown = np.zeros((capacity, n_words), dtype=np.uint64)
            grown[:n_points] = packed[:n_points]
            packed = grown
            grown_alive = np.zeros(capacity, dtype=np.bool_)
            grown_alive[:n_points] = alive[:n_points]
            alive = grown_alive
            grown_cover = np.zeros((capacity, 2))
            grown_cover[:n_points] = cover[:n_points]
            cover = grown_cover
        # positives in the new box: collect the uncovered ones; an older point whose seed is
        # among them and whose box lies inside the new one becomes redundant
        n_inside = _search(
            -1,
            0,
            pos_keys,
            pos_rows,
            pos_onehot,
            0,
            n_pos,
            0,
            box,
            radix,
            pos_directory,
            levels,
            stack,
            inside,
            (marks[0][:0], marks[1], blocked),
        )
        n_new = 0
        covered_pos = 0.0
        for t in range(n_inside):
            row = inside[t]
            covered_pos += weight[row]
            i = point_of_row[row]
            if i >= 0 and alive[i] and _contains(allowed, packed[i], blocks):
                alive[i] = False
            if uncovered[row]:
                inside[n_new] = row
                n_new += 1
        packed[n_points] = words
        alive[n_points] = True
        # negatives inside: those of the seed's own cell, plus what the tolerance let in (the
        # box holds no other negative)
        cover[n_points, 0] = covered_pos
        cover[n_points, 1] = _cell_weight(pos_codes[k], neg_runs, neg_weight, blocks, radix)
        if tolerance > 0:
            cover[n_points, 1] += mass[0]
        point_of_row[k] = n_points
        n_points += 1
        if n_new == 0:
            continue
        newly = np.sort(inside[:n_new])  # row order: the same float sums as the generic code
        for s in newly:
            uncovered[s] = False
            for f in range(m):
                z = blocks[f] + pos_codes[s, f]
                total[z] += weight[s]
                touched[z] = True
        subtract_touched(s0, total, touched)
    return unpack_alive(packed, alive, n_points, n_bits), cover[:n_points][alive[:n_points]]


@njit(cache=True, nogil=True)
def subtract_touched(s0, total, touched):
    """|S_i^0| -= the weight of the newly covered positives with a 0 at i; resets the sums."""
    for z in range(s0.size):
        if touched[z]:
            s0[z] = s0[z] - total[z]
            total[z] = 0.0
            touched[z] = False


@njit(cache=True, nogil=True)
def unpack_alive(packed, alive, n_points, n_bits):
    """The points still alive, unpacked to bool rows, in insertion order."""
    out = np.zeros((n_points, n_bits), dtype=np.bool_)
    m = 0
    for i in range(n_points):
        if alive[i]:
            for b in range(n_bits):
                out[m, b] = ((packed[i, b >> 6] >> np.uint64(b & 63)) & np.uint64(1)) != 0
            m += 1
    return out[:m]


@njit(cache=True, nogil=True)
def _box_weights(points, blocks, keys, rows, onehot, directory, levels, radix, wpos, wneg):
    n_points = points.shape[0]
    m = blocks.size - 1
    box = _new_box(blocks, levels)
    max_bins = box[0].shape[1]
    stack = _new_stack(m * max_bins + directory.size, m)
    out = np.empty(max(rows.size, 1), dtype=np.int64)
    flags = np.zeros((1, 1), dtype=np.bool_)
    no_marks = (np.zeros(0, dtype=np.int64), flags, flags)
    pos = np.zeros(n_points)
    neg = np.zeros(n_points)
    n_allowed = box[2]
    for i in range(n_points):
        _clear_box(box)
        empty = False
        for f in range(m):
            for b in range(blocks[f], blocks[f + 1]):
                if not points[i, b]:
                    _allow(f, b - blocks[f], box)
            if n_allowed[f] == 0:
                empty = True
        if empty or rows.size == 0:
            continue
        n = _search(
            -1,
            0,
            keys,
            rows,
            onehot,
            0,
            rows.size,
            0,
            box,
            radix,
            directory,
            levels,
            stack,
            out,
            no_marks,
        )
        p = 0.0
        q = 0.0
        for t in range(n):
            p += wpos[out[t]]
            q += wneg[out[t]]
        pos[i] = p
        neg[i] = q
    return pos, neg


def box_weights(points, codes, blocks, radix, positive_weight, negative_weight):
    """Weighted positives and negatives inside every point's box (records = rows of bin
    codes), found by the same depth-first search over records sorted by cell key."""
    blocks = np.asarray(blocks, dtype=np.int64)
    levels = directory_levels(blocks, codes.shape[0])
    keys, rows, onehot, directory = positive_runs(codes, blocks, radix, levels)
    return _box_weights(
        np.ascontiguousarray(points, dtype=np.bool_),
        blocks,
        keys,
        rows,
        onehot,
        directory,
        levels,
        radix,
        np.asarray(positive_weight, dtype=np.float64),
        np.asarray(negative_weight, dtype=np.float64),
    )
