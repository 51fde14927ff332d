"""The token vocabulary: content tokens 0..n_content-1 followed by the specials PAD, SEP, EOS."""

from __future__ import annotations

from dataclasses import dataclass

N_SPECIAL = 3
"""Number of special tokens appended after the content tokens (PAD, SEP, EOS)."""


@dataclass(frozen=True)
class Vocab:
    """Token ids of one synthetic world.

    Content tokens are 0..n_content-1; the specials follow them in the order PAD, SEP, EOS,
    so `size` is the embedding / logit width every model uses.
    """

    n_content: int

    def __post_init__(self) -> None:
        if self.n_content < 1:
            raise ValueError(f"n_content: must be >= 1, got {self.n_content!r}")

    @classmethod
    def from_size(cls, size: int) -> Vocab:
        """The vocabulary whose `size` (content tokens plus specials) is `size`."""
        return cls(n_content=size - N_SPECIAL)

    @property
    def pad(self) -> int:
        """Filler for positions outside a sequence; models treat it as an ordinary token."""
        return self.n_content

    @property
    def sep(self) -> int:
        """Separator between x and y."""
        return self.n_content + 1

    @property
    def eos(self) -> int:
        """End of y; it is supervised like a y token."""
        return self.n_content + 2

    @property
    def size(self) -> int:
        """Total number of token ids (content plus specials)."""
        return self.n_content + N_SPECIAL
