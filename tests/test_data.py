"""Tests for batchviz.data: loaders on small hand-made files, their error messages,
the synthetic generators' rules and statistics, and the arc-hybrid oracle."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from batchviz.data import (
    EMPTY, LEFT_ARC, RIGHT_ARC, SHIFT, UPOS, Configuration, DataFormatError, DepSentence,
    TaggedSentence, Tree, Vocab, apply, combine_sentiment, feature_positions, find_cycle,
    follow, is_final, is_projective, leaf_sentiment, legal_transitions, oracle,
    oracle_sequence, read_conll, read_conllu, read_trees, relation_rule, spell_word,
    synthetic_dependencies, synthetic_tagging, synthetic_trees, tag_rule,
)

DATA = Path(__file__).parent / "data"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def assert_points_at(error: pytest.ExceptionInfo, path: Path, line: int) -> None:
    """The message starts with file:line (optionally :column) and the attributes agree."""
    message = str(error.value)
    assert message.startswith(f"{path}:{line}:"), message
    assert error.value.source == str(path) and error.value.line == line


# --------------------------------------------------------------------------- CoNLL


def test_read_conll_exact_contents():
    sentences = read_conll(DATA / "ner_small.conll")
    assert sentences == [
        TaggedSentence(["EU", "rejects", "German", "call", "."], ["B-ORG", "O", "B-MISC", "O", "O"]),
        TaggedSentence(["Peter", "Blackburn"], ["B-PER", "I-PER"]),
        TaggedSentence(["BRUSSELS", "1996-08-22"], ["B-LOC", "O"]),
    ]


def test_read_conll_accepts_lines_and_two_columns():
    assert read_conll(["a X", "b Y", "", "", "c Z"]) == [
        TaggedSentence(["a", "b"], ["X", "Y"]), TaggedSentence(["c"], ["Z"])]


def test_read_conll_single_column_names_file_and_line(tmp_path):
    path = write(tmp_path, "bad.conll", "EU NNP B-ORG\nrejects\n")
    with pytest.raises(ValueError) as error:
        read_conll(path)
    assert_points_at(error, path, 2)


def test_read_conll_inconsistent_columns_names_file_and_line(tmp_path):
    path = write(tmp_path, "bad.conll", "EU NNP B-ORG\n\nPeter B-PER\n")
    with pytest.raises(DataFormatError) as error:
        read_conll(path)
    assert_points_at(error, path, 3)
    assert "line 1 has 3" in str(error.value)


def test_read_conll_lines_source_is_named():
    with pytest.raises(ValueError, match=r"^<lines>:1:"):
        read_conll(["lonely"])


def test_multiline_string_is_rejected_with_hint():
    with pytest.raises(TypeError, match="splitlines"):
        read_conll("a X\nb Y\n")


def test_vocab_min_count_unk_and_order():
    counts = {"the": 10, "cat": 5, "sat": 5, "rare": 4, "once": 1}
    vocab = Vocab.from_counts(counts, min_count=5)
    assert vocab.words == ["<unk>", "the", "cat", "sat"]  # frequency, then alphabetical
    assert len(vocab) == 4
    assert vocab.index("the") == 1 and vocab.index("rare") == 0 and vocab.index("zebra") == 0
    assert vocab.indices(["cat", "once"]) == [2, 0]
    assert vocab.word(3) == "sat" and "cat" in vocab and "rare" not in vocab


def test_vocab_round_trips_through_dict_and_json():
    vocab = Vocab.from_corpus([s.words for s in read_conll(DATA / "ner_small.conll")])
    again = Vocab.from_dict(json.loads(json.dumps(vocab.to_dict())))
    assert again == vocab and again.words == vocab.words


def test_tag_vocab_without_unk_raises_on_unknown():
    tags = Vocab.from_corpus([["O", "B-PER", "O"]], unk=None)
    assert tags.words == ["O", "B-PER"]
    with pytest.raises(KeyError):
        tags.index("B-LOC")
    assert Vocab.from_dict(tags.to_dict()) == tags
    with pytest.raises(ValueError):
        Vocab.from_counts({"a": 1}, min_count=2, unk=None)
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(["a", "a"])


# --------------------------------------------------------------------------- CoNLL-U


def test_read_conllu_skips_comments_ranges_and_empty_nodes():
    first, second = read_conllu(DATA / "ud_small.conllu")
    assert first == DepSentence(
        words=["I", "do", "n't", "know", "."],
        pos=["PRON", "AUX", "PART", "VERB", "PUNCT"],
        heads=[4, 4, 4, 0, 4],
        rels=["nsubj", "aux", "advmod", "root", "punct"],
    )
    assert second.words == ["Sue", "likes", "coffee", "and", "Bill", "tea"]
    assert second.heads == [2, 0, 2, 5, 1, 5]
    assert second.rels[-1] == "orphan"
    assert is_projective(first.heads) and not is_projective(second.heads)


def conllu_line(i, word, head, rel="dep"):
    return f"{i}\t{word}\t{word}\tNOUN\tNN\t_\t{head}\t{rel}\t_\t_\n"


def test_read_conllu_head_out_of_range(tmp_path):
    text = "# c\n" + conllu_line(1, "a", 0) + "\n" + conllu_line(1, "b", 2) + conllu_line(2, "c", 7)
    path = write(tmp_path, "bad.conllu", text)
    with pytest.raises(ValueError) as error:
        read_conllu(path)
    assert_points_at(error, path, 5)
    assert "starting at line 4" in str(error.value)


def test_read_conllu_cycle(tmp_path):
    text = conllu_line(1, "a", 0) + "\n# s2\n" + conllu_line(1, "x", 0) + conllu_line(2, "y", 3) + conllu_line(3, "z", 2)
    path = write(tmp_path, "cycle.conllu", text)
    with pytest.raises(DataFormatError) as error:
        read_conllu(path)
    assert_points_at(error, path, 5)  # line of token 2, the first token of the cycle
    assert "starting at line 4" in str(error.value) and "2 -> 3 -> 2" in str(error.value)


@pytest.mark.parametrize("bad, message", [
    ("1\ta\ta\tNOUN\n", "10 tab-separated"),
    ("2\ta\ta\tNOUN\tNN\t_\t0\troot\t_\t_\n", "should be 1"),
    ("1\ta\ta\tNOUN\tNN\t_\t_\troot\t_\t_\n", "not a number"),
])
def test_read_conllu_malformed_token_line(tmp_path, bad, message):
    path = write(tmp_path, "bad.conllu", "# ok\n" + bad)
    with pytest.raises(ValueError, match=message) as error:
        read_conllu(path)
    assert_points_at(error, path, 2)


def crossing_arcs(heads):
    """Reference projectivity test: no two arcs (root arcs included) cross."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
    return any(a < c < b < e for a, b in arcs for c, e in arcs)


@pytest.mark.parametrize("heads, projective", [
    ([0], True),
    ([2, 0, 2], True),
    ([2, 0, 0], True),             # two root dependents, nested arcs
    ([3, 4, 0, 3], False),         # arcs 1-3 and 2-4 cross
    ([2, 3, 0, 3, 2, 7, 5, 4], False),  # "A hearing is scheduled on the issue today"
    ([0, 0, 1], False),            # arc 1-3 passes over a root dependent
])
def test_is_projective_known_examples(heads, projective):
    assert is_projective(heads) is projective
    assert crossing_arcs(heads) is not projective


def test_find_cycle_and_is_projective_rejects_cycles():
    assert find_cycle([2, 0, 2]) is None
    assert find_cycle([1]) == [1]
    assert sorted(find_cycle([0, 3, 2])) == [2, 3]
    with pytest.raises(ValueError, match="cycle"):
        is_projective([2, 1])


# --------------------------------------------------------------------------- PTB / SST

SST_LINES = (DATA / "sst_small.txt").read_text().splitlines()


def test_read_trees_exact_structure():
    trees = read_trees(DATA / "sst_small.txt")
    assert len(trees) == 3
    assert trees[0] == Tree(3, [Tree(2, word="It"), Tree(4, [Tree(2, word="'s"), Tree(3, word="good")])])
    assert trees[1].words() == ["The", "plot", "is", "dull", "."]
    assert [leaf.label for leaf in trees[2].leaves()] == [2, 4, 2, 2]


def test_tree_round_trip_and_post_order():
    trees = read_trees(DATA / "sst_small.txt")
    assert [t.to_bracket() for t in trees] == SST_LINES
    order = trees[0].nodes()
    assert [n.word or n.label for n in order] == ["It", "'s", "good", 4, 3]
    for tree in trees:
        seen = set()
        for node in tree.nodes():  # every child is listed before its parent
            assert all(id(child) in seen for child in node.children)
            seen.add(id(node))
        assert tree.is_binary()


def test_ptb_string_labels_multiline_and_outer_bracket():
    lines = ["( (S (NP (DT The) (NN cat))", "    (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"]
    (tree,) = read_trees(lines)
    assert tree.label == "" and tree.children[0].label == "S"
    assert tree.words() == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert read_trees([tree.to_bracket()]) == [tree]


def test_binarize_right_factored_and_collapses_unaries():
    (tree,) = read_trees(["(S (A a) (B b) (C c) (D (E e)))"])
    assert not tree.is_binary()
    binary = tree.binarize()
    assert binary.to_bracket() == "(S (A a) (S (B b) (S (C c) (E e))))"
    assert binary.is_binary() and binary.words() == tree.words()
    assert tree.to_bracket() == "(S (A a) (B b) (C c) (D (E e)))"  # original untouched


@pytest.mark.parametrize("text, line, column, message", [
    ("(3 (2 It) (4 good))\n(2 (2 bad)))\n", 2, 12, "unbalanced ')'"),
    ("(3 (2 It) (4 good))\n(2 (2 a) (2 b)\n(1 (1 c) (1 d))\n", 2, 1, "never closed"),
    ("(3 (2 It) (4 good)) oops\n", 1, 21, "outside any brackets"),
    ("(3 (2 It) x (4 good))\n", 1, 1, "mixes words"),
    ("(3 (2 It)) ()\n", 1, 12, "empty brackets"),
    ("(3 (2 It is) (4 good))\n", 1, 4, "leaf 2 has 2 words ['It', 'is'], expected one"),
    ("(3 (2) (4 good))\n", 1, 4, "node 2 has neither a word nor children"),
])
def test_read_trees_errors_name_line_and_column(tmp_path, text, line, column, message):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        read_trees(path)
    assert str(error.value).startswith(f"{path}:{line}:{column}:")


# --------------------------------------------------------------------------- synthetic


def word_ids(vocab_size):
    return {spell_word(i): i for i in range(vocab_size)}


def test_spellings_unique_and_in_length_range():
    spellings = [spell_word(i) for i in range(20000)]
    assert len(set(spellings)) == len(spellings)
    assert all(2 <= len(s) <= 12 and s.isalpha() and s.islower() for s in spellings)
    assert len({len(s) for s in spellings}) == 11  # every length 2..12 occurs


@pytest.mark.parametrize("make", [
    lambda seed: synthetic_tagging(50, seed=seed),
    lambda seed: synthetic_trees(50, seed=seed),
    lambda seed: synthetic_dependencies(50, seed=seed),
])
def test_generators_are_deterministic(make):
    assert make(3) == make(3)
    assert make(3) != make(4)


def test_fixed_length_tagging_matches_paper_setup():
    data = synthetic_tagging(200, length=40, vocab_size=1000, n_tags=300, seed=1)
    assert all(len(s) == 40 for s in data)
    ids = word_ids(1000)
    assert {ids[w] for s in data for w in s.words} <= set(range(1000))
    assert {int(t[1:]) for s in data for t in s.tags} <= set(range(300))


def test_tags_follow_the_learnable_rule_and_need_context():
    data = synthetic_tagging(300, seed=2)
    ids = word_ids(1000)
    tags_of_word = {}
    for sentence in data:
        prev = None
        for word, tag in zip(sentence.words, sentence.tags):
            assert tag == f"T{tag_rule(ids[word], prev, 300)}"
            tags_of_word.setdefault(word, set()).add(tag)
            prev = ids[word]
    assert any(len(tags) > 1 for tags in tags_of_word.values())  # the left word matters


def test_ner_lengths_statistics():
    lengths = np.array([len(s) for s in synthetic_tagging(5000, seed=0)])
    assert 22 <= lengths.mean() <= 26
    assert lengths.min() >= 1 and lengths.max() <= 120
    assert np.median(lengths) < lengths.mean()  # right-skewed
    assert (lengths >= 60).sum() > 20  # a real tail of long sentences


def test_words_are_zipfian_with_rare_words():
    counts = Counter(w for s in synthetic_tagging(500, seed=0) for w in s.words)
    frequencies = sorted(counts.values(), reverse=True)
    assert frequencies[0] > 50 * frequencies[len(frequencies) // 2]
    assert sum(1 for c in frequencies if c < 5) > 200  # rare words, for the char model
    vocab = Vocab.from_counts(counts, min_count=5)
    assert 1 < len(vocab) < len(counts)


def test_synthetic_trees_sizes_and_labels():
    trees = synthetic_trees(2000, seed=5)
    sizes = np.array([len(t.leaves()) for t in trees])
    assert sizes.min() >= 5 and sizes.max() <= 50 and 17 <= sizes.mean() <= 21
    ids = word_ids(5000)
    for tree in trees[:200]:
        assert tree.is_binary()
        for node in tree.nodes():
            if node.is_leaf:
                assert node.label == leaf_sentiment(ids[node.word], 5)
            else:
                assert node.label == combine_sentiment(node.children[0].label, node.children[1].label, 5)
    assert len({t.label for t in trees}) >= 3


def test_combine_sentiment_rounds_toward_neutral():
    assert [combine_sentiment(a, b, 5) for a, b in [(4, 4), (3, 4), (0, 1), (1, 2), (2, 3), (0, 4)]] == [4, 3, 1, 2, 2, 2]


def test_synthetic_dependencies_are_projective_trees_with_rules():
    data = synthetic_dependencies(3000, seed=6)
    lengths = np.array([len(s) for s in data])
    assert 15.5 <= lengths.mean() <= 18.5 and lengths.min() >= 1 and lengths.max() <= 100
    ids = word_ids(5000)
    for sentence in data:
        assert find_cycle(sentence.heads) is None and is_projective(sentence.heads)
        assert sentence.heads.count(0) == 1
        for d, (word, pos, head, rel) in enumerate(zip(sentence.words, sentence.pos, sentence.heads, sentence.rels), 1):
            p = ids[word] % len(UPOS)
            assert pos == UPOS[p]
            assert rel == ("root" if head == 0 else relation_rule(p, head > d))


# --------------------------------------------------------------------------- arc-hybrid


def test_arc_hybrid_hand_example():
    heads = [2, 0, 2]  # "Sue likes coffee"
    transitions = oracle_sequence(heads)
    assert transitions == [SHIFT, LEFT_ARC, SHIFT, SHIFT, RIGHT_ARC, LEFT_ARC]
    config = Configuration.initial(3)
    assert legal_transitions(config) == [SHIFT]
    assert feature_positions(config) == [EMPTY, EMPTY, EMPTY, 1]
    for t in transitions[:4]:
        config = apply(config, t)
    assert config.stack == (2, 3) and config.buffer == (0,)
    assert legal_transitions(config) == [LEFT_ARC, RIGHT_ARC]
    assert feature_positions(config) == [3, 2, EMPTY, 0]
    assert feature_positions(config, k=1, buffer_k=2) == [3, 0, EMPTY]
    with pytest.raises(ValueError, match="illegal"):
        apply(config, SHIFT)
    _, final = follow(heads, ["nsubj", "root", "obj"])
    assert is_final(final) and final.heads() == heads and final.labels() == ["nsubj", "root", "obj"]


def test_oracle_reproduces_gold_heads_on_random_projective_trees():
    sentences = synthetic_dependencies(200, seed=11)
    for sentence in sentences:
        transitions, final = follow(sentence.heads)
        assert final.heads() == sentence.heads
        assert len(transitions) == 2 * len(sentence)


def random_tree(rng, n):
    """Any tree over 1..n (several root dependents allowed), by random attachment."""
    heads, placed = [0] * n, [0]
    for token in rng.permutation(np.arange(1, n + 1)).tolist():
        heads[token - 1] = int(rng.choice(placed))
        placed.append(token)
    return heads


def test_oracle_succeeds_exactly_on_projective_trees():
    rng = np.random.default_rng(0)
    outcomes = Counter()
    for _ in range(400):
        heads = random_tree(rng, int(rng.integers(1, 9)))
        projective = is_projective(heads)
        assert projective is not crossing_arcs(heads)
        if projective:
            config = Configuration.initial(len(heads))
            while not is_final(config):
                move = oracle(config, heads)
                assert move in legal_transitions(config)
                config = apply(config, move)
            assert config.heads() == heads
        else:
            with pytest.raises(ValueError):
                follow(heads)
        outcomes[projective] += 1
    assert outcomes[True] > 50 and outcomes[False] > 50
