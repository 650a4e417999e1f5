"""The ``moderation`` operation (docs/moderation.md): its input, its fixture's verdicts (every category
gets a score), the fit check and the generated verdicts (``scoring.moderate_texts``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from llmts.errors import FixtureMismatch
from llmts.runtime.operations.scoring import moderate_texts
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.schema.neutral import OperationInput, ScriptedOutput, build
from llmts.schema.operations.moderation import (
    MODERATION_CATEGORIES,
    ModerationFixture,
    ModerationResult,
    ModerationVerdict,
)

__all__ = ["MODERATION", "ModerationInput"]

# A category a fixture says applies scores this unless the fixture gives its score.
_APPLIES_SCORE = 0.9
_CLEAN_SCORE = 0.0001


@dataclass(frozen=True, slots=True)
class ModerationInput(OperationInput):
    """The texts to moderate, and the positions of the inputs that are images (their text is empty)."""

    inputs: tuple[str, ...]
    image_inputs: tuple[int, ...] = ()

    recorded_options: ClassVar[tuple[str, ...]] = ("image_inputs",)

    def texts(self) -> tuple[str, ...]:
        return self.inputs


def _verdict(fixture: ModerationFixture) -> ModerationVerdict:
    categories = {name: fixture.categories.get(name, False) for name in MODERATION_CATEGORIES}
    scores = {
        name: fixture.category_scores.get(name, _APPLIES_SCORE if categories[name] else _CLEAN_SCORE)
        for name in MODERATION_CATEGORIES
    }
    flagged = fixture.flagged if fixture.flagged is not None else any(categories.values())
    return ModerationVerdict(flagged=flagged, categories=categories, category_scores=scores)


def _compile(fixture: ModerationFixture | list[ModerationFixture]) -> ScriptedOutput:
    given = fixture if isinstance(fixture, list) else [fixture]
    return answer("moderation", ModerationResult(verdicts=tuple(_verdict(v) for v in given)))


def _fits(request: ModerationInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """One verdict for every input, or one per input."""
    result = output.result
    if not isinstance(result, ModerationResult):
        return
    count = len(request.inputs)
    if len(result.verdicts) not in (1, count):
        raise FixtureMismatch(
            f"{where} scripts {len(result.verdicts)} moderation results but the request has {count} input(s)"
        )


def _generate(request: ModerationInput, seed: str) -> ScriptedOutput:
    return answer("moderation", build(ModerationResult, verdicts=moderate_texts(request.inputs, seed)))


MODERATION = OperationUnit("moderation", ModerationInput, "moderation", _compile, _fits, _generate)
