import Mathlib
