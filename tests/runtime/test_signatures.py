"""Reasoning signatures in memory (llmts/runtime/signatures.py; docs/realistic-answers.md, "Strict request
contract"): the keyed default verifies over its text without stored state, is bound to the seed, and a
configuration's scripted signatures verify with the texts they were scripted with."""

from __future__ import annotations

import base64

from llmts.runtime.plans import compile_config
from llmts.runtime.signatures import UNSEEDED, SignatureBook, signature_book, signing_key
from llmts.schema.config import SessionConfig


def _config(**fields: object) -> SessionConfig:
    return SessionConfig.model_validate(fields)


def test_keyed_signature_verifies_its_text_only() -> None:
    book = SignatureBook(signing_key("seed-a"))
    signature = book.sign("Look the city up.")

    assert book.issued(signature, "Look the city up.")
    assert book.issued(signature)  # a redacted block carries no text: the MAC alone
    assert not book.issued(signature, "Look the city up!")  # the text was changed
    assert not book.issued(signature[:-4] + "AAA=", "Look the city up.")  # the signature was changed
    assert not book.issued("", "x") and not book.issued(None) and not book.issued(["x"])


def test_keyed_signature_is_bound_to_the_seed_and_stable_for_it() -> None:
    one, same, other = (SignatureBook(signing_key(seed)) for seed in ("a", "a", "b"))

    assert one.sign("t") == same.sign("t")
    assert not other.issued(one.sign("t"), "t")
    assert not UNSEEDED.issued(one.sign("t"), "t")
    assert UNSEEDED.issued(SignatureBook(signing_key(None)).sign("t"), "t")  # unseeded sessions share a key


def test_bytes_forms_gemini_and_bedrock_blobs() -> None:
    book = SignatureBook(signing_key("s"))
    signature = book.sign("thought")
    raw = base64.b64decode(signature)

    assert book.issued_bytes(base64.b64encode(raw).decode())  # Gemini: the bytes re-encoded
    assert book.issued_bytes(base64.urlsafe_b64encode(raw).decode())
    assert book.issued_bytes(base64.b64encode(signature.encode()).decode())  # Bedrock's redacted blob
    assert not book.issued_bytes(base64.b64encode(b"forged").decode())
    assert not book.issued_bytes("not base64 at all!") and not book.issued_bytes(7)


def test_configuration_indexes_scripted_signatures_of_scenarios_and_steps() -> None:
    config = _config(
        determinism={"seed": "x"},
        scenarios=[{"responses": [{"reasoning": {"text": "Think.", "signature": "sig-1"}, "text": "a"}]}],
        conversations=[
            {
                "steps": [
                    {
                        "id": "s",
                        "complete": True,
                        "response": {
                            "reasoning": {"summary": ["One.", "Two."], "signature": "c2ln"},
                            "text": "b",
                        },
                    }
                ]
            }
        ],
    )
    book = signature_book(config)

    assert book.issued("sig-1", "Think.") and not book.issued("sig-1", "Other.")
    assert book.issued("c2ln", "One.\n\nTwo.")  # the summary parts as the thinking text
    assert book.issued_bytes(base64.b64encode(b"sig").decode())  # "c2ln" decoded by a client
    assert book.issued_bytes(base64.b64encode(b"sig-1").decode())  # not base64: its UTF-8 bytes
    assert not book.issued("sig-2", "Think.")


def test_compiled_default_signature_is_the_sessions_keyed_one() -> None:
    config = _config(
        determinism={"seed": "k"}, scenarios=[{"responses": [{"reasoning": {"text": "Why."}, "text": "a"}]}]
    )
    plan = compile_config(config)
    output = plan.scenarios[0].responses[0].output
    assert output is not None and output.reasoning is not None

    assert plan.signatures.issued(output.reasoning.signature, "Why.")
    assert plan.signatures.key == signing_key("k")
