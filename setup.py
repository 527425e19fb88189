"""Build the hand evaluator's C core (arena.cards._eval); everything else is plain Python in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "arena.cards._eval",
            sources=["arena/cards/_eval.c"],
            extra_compile_args=["-O3", "-std=c99"],
        )
    ]
)
