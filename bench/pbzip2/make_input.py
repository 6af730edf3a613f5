#!/usr/bin/env python3
"""make_input.py BYTES OUT: writes OUT, BYTES bytes of deterministic English-like text.

Words are made of letters drawn by a seeded Mersenne Twister (Python's random, whose sequence
for a given seed is stable across versions), a vocabulary of 20000 words used with Zipf-like
frequencies, in lines of 6 to 16 words: text that bzip2 compresses about 3:1, unlike random
bytes (incompressible) or one repeated phrase (bzip2's worst case for its block sort)."""
import random
import sys

size, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(20)
letters = "etaoinshrdlcumwfgypbvkjxqz"
letter_weights = [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4,
                  2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1]
vocabulary = ["".join(rng.choices(letters, letter_weights, k=rng.randint(1, 11)))
              for _ in range(20000)]
cumulative, total = [], 0.0
for rank in range(len(vocabulary)):
    total += 1.0 / (rank + 1)
    cumulative.append(total)
written = 0
with open(out, "w") as f:
    while written < size:
        chunk = []
        for _ in range(2000):
            words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(6, 16))
            chunk.append(" ".join(words).capitalize() + ".\n")
        text = "".join(chunk)[: size - written]
        f.write(text)
        written += len(text)
