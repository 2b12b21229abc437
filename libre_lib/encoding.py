"""Inverse one-hot encoding and distinct records (paper, section 3, Example 3.1).

A feature with ``k`` bins takes ``k`` consecutive bits; a record has a 0 at the bit of its own
bin and 1 elsewhere, so the relation between records and labels becomes monotone. A lattice
element ``a`` *covers* a record ``s`` (``a <= s``) iff every 1 of ``a`` is also a 1 of ``s``:
the zeros of ``a`` are the bins a rule allows, its ones the bins it excludes.

The learners never materialize the bit matrix of real data: a record's bits are fully given
by the positions of its zeros, which for inverse one-hot data are ``code + offset`` of each
feature. :class:`ZeroSets` stores exactly those positions (CSR layout), which also represents
any bit matrix, so the paper's bit-level examples run through the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def offsets(n_bins: np.ndarray) -> np.ndarray:
    """First bit of every feature in the concatenated layout."""
    return np.concatenate(([0], np.cumsum(n_bins)[:-1])).astype(np.int64)


def inverse_one_hot(codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Bit matrix (rows x sum(n_bins), bool) of bin codes (the paper's inverse one-hot,
    section 3). Code -1 gives an all-ones block, which the lattice reads as "every bin": a
    display and test helper only, since a model's coverage matches a value no bin holds only
    by rules that leave its column free; the learners never see -1
    (:class:`ZeroSets` refuses it)."""
    codes = np.asarray(codes)
    n_bins = np.asarray(n_bins, dtype=np.int64)
    bits = np.ones((codes.shape[0], int(n_bins.sum())), dtype=bool)
    rows, cols = np.nonzero(codes >= 0)
    bits[rows, codes[rows, cols] + offsets(n_bins)[cols]] = False
    return bits


def point_to_allowed(point: np.ndarray) -> np.ndarray:
    """The bins a lattice element allows are its zeros."""
    return ~np.asarray(point, dtype=bool)


@dataclass(frozen=True)
class ZeroSets:
    """Zero positions of binary records in CSR form: row ``r`` has zeros at
    ``indices[indptr[r]:indptr[r + 1]]``. ``width`` is set when every row has the same number
    of zeros (inverse one-hot data: one per feature), which enables reshaped fast paths.
    ``blocks`` (first bit of every feature, then ``n_bits``) is set for inverse one-hot data,
    where every row has exactly one zero per block."""

    indptr: np.ndarray
    indices: np.ndarray
    n_bits: int
    width: int | None
    blocks: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return self.indptr.size - 1

    @property
    def rows(self) -> np.ndarray:
        """Row id of every stored zero."""
        return np.repeat(np.arange(self.n_rows), np.diff(self.indptr))

    @classmethod
    def from_bits(cls, bits) -> ZeroSets:
        bits = np.asarray(bits)
        if bits.dtype != bool:
            bits = bits.astype(bool)
        if bits.ndim != 2:
            raise ValueError(f"expected a 2-D bit matrix, got shape {bits.shape}")
        rows, cols = np.nonzero(~bits)
        counts = np.bincount(rows, minlength=bits.shape[0])
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        width = int(counts[0]) if counts.size and np.all(counts == counts[0]) else None
        return cls(indptr, cols.astype(np.int64), bits.shape[1], width)

    @classmethod
    def from_codes(cls, codes: np.ndarray, n_bins: np.ndarray) -> ZeroSets:
        """Zero positions of inverse one-hot records given by bin codes (no code may be -1)."""
        codes = np.asarray(codes, dtype=np.int64)
        n_bins = np.asarray(n_bins, dtype=np.int64)
        if codes.size and codes.min() < 0:
            raise ValueError("codes must be >= 0 to build zero sets")
        n, m = codes.shape
        indices = (codes + offsets(n_bins)).ravel()
        indptr = np.arange(0, n * m + 1, m, dtype=np.int64) if m else np.zeros(n + 1, np.int64)
        blocks = np.concatenate((offsets(n_bins), [n_bins.sum()])).astype(np.int64) if m else None
        return cls(indptr, indices, int(n_bins.sum()), m, blocks)

    def to_bits(self) -> np.ndarray:
        bits = np.ones((self.n_rows, self.n_bits), dtype=bool)
        bits[self.rows, self.indices] = False
        return bits

    def any_per_row(self, flags: np.ndarray) -> np.ndarray:
        """For every row: is ``flags`` true at one of its zero positions?"""
        hit = flags[self.indices]
        if self.width is not None:
            return hit.reshape(self.n_rows, self.width).any(axis=1)
        return np.bincount(self.rows, weights=hit, minlength=self.n_rows) > 0

    def count_per_row(self, flags: np.ndarray) -> np.ndarray:
        """For every row: at how many of its zero positions is ``flags`` true?"""
        hit = flags[self.indices]
        if self.width is not None:
            return hit.reshape(self.n_rows, self.width).sum(axis=1, dtype=np.int64)
        return np.bincount(self.rows, weights=hit, minlength=self.n_rows).astype(np.int64)

    def bit_weights(self, weights: np.ndarray) -> np.ndarray:
        """Sum of row weights per bit position, over the rows that have a zero there."""
        per_zero = np.repeat(weights, np.diff(self.indptr))
        return np.bincount(self.indices, weights=per_zero, minlength=self.n_bits)


def row_keys(codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """One int64 key per row, equal iff the rows' codes are equal (codes may be -1)."""
    codes = np.asarray(codes)
    n = codes.shape[0]
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for j in range(codes.shape[1]):
        radix = int(n_bins[j]) + 1
        if span * radix >= 2**62:
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64)
            span = int(key.max()) + 1 if n else 1
        key = key * radix + (codes[:, j].astype(np.int64) + 1)
        span *= radix
    return key


@dataclass(frozen=True)
class DistinctRecords:
    """Distinct rows of a code matrix in order of first occurrence, with class weights."""

    codes: np.ndarray
    positive_weight: np.ndarray
    negative_weight: np.ndarray
    inverse: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]


def distinct_records(
    codes: np.ndarray,
    n_bins: np.ndarray,
    positive_weight: np.ndarray,
    negative_weight: np.ndarray,
) -> DistinctRecords:
    """Collapse identical rows, summing their positive and negative weights."""
    key = row_keys(codes, n_bins)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inverse = rank[inverse.ravel()]
    n = order.size
    return DistinctRecords(
        codes=np.ascontiguousarray(codes[first[order]]),
        positive_weight=np.bincount(inverse, weights=positive_weight, minlength=n),
        negative_weight=np.bincount(inverse, weights=negative_weight, minlength=n),
        inverse=inverse,
    )
