"""The rule for a shown sentence (sitekit/claims/branches.py), on made-up pages: a claim whose
sentence is shown holds; one the intervals cannot tell is shown only in a clause for
that outcome; a claim about this hardware has a branch for every outcome, whatever this
run's data says. Then on the committed pages themselves."""

import pytest

from sitekit.claims.branches import BranchError, check_guards, choose_branches, unguarded
from sitekit.claims.claim_files import Claim, ClaimBook
from sitekit.rendering.markers import MarkerError, PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO, write_data


def _book(**claims: tuple[str, bool]) -> ClaimBook:
    return ClaimBook({f"exp.{n}": Claim(f"exp.{n}", check, hardware) for n, (check, hardware) in claims.items()})


CLAIMS = _book(
    big=("exp.ratio > 2", False),  # holds
    huge=("exp.ratio > 3", False),  # does not
    fast=("exp.ratio > 2", True),  # about this hardware, holds
    slow=("exp.ratio < 2", True),  # about this hardware, does not
    # a ratio of 1.03 to 1.08 against a margin of 5 %: straddles the edge, cannot tell
    beyond=("exceeds(exp.low, exp.high, 0.05)", True),
    same=("same(exp.low, exp.high, 0.05)", True),
    maybe=("exceeds(exp.low, exp.high, 0.05)", False),  # the same, not about hardware
)


@pytest.fixture
def ctx(tmp_path):
    write_data(tmp_path, "exp", {"t": [{"n": 1}]}, {"ratio": 2.5, "low": 1.03, "high": 1.08})
    return PageContext(data=SiteData(tmp_path), page="p.md", url_prefix="", claims=CLAIMS)


def shown(page: str, ctx) -> str:
    return choose_branches(page, ctx)


def test_a_hardware_claim_in_its_own_branch_shows_the_branch_the_data_picks(ctx):
    page = "<!-- if exp.fast -->{{ claim('exp.fast', 'fast') }}<!-- else -->{{ value('exp.ratio') }}<!-- end -->"
    assert shown(page, ctx) == "{{ claim('exp.fast', 'fast') }}"
    page = "<!-- if exp.slow -->{{ claim('exp.slow', 'slow') }}<!-- else -->only {{ value('exp.ratio') }}<!-- end -->"
    assert shown(page, ctx) == "only {{ value('exp.ratio') }}"
    assert render_markers(page, ctx) == "only 2.5"


def test_a_shown_sentence_whose_claim_does_not_hold_fails_the_build_hardware_or_not(ctx):
    with pytest.raises(
        BranchError, match=r"p.md: claim 'huge' does not hold: exp.huge = exp.ratio > 3 with exp.ratio = 2.5"
    ):
        shown("It is {{ claim('exp.huge', 'huge') }}.", ctx)
    # a hardware claim inside a branch of its own that does not keep it: never shown
    page = (
        "<!-- if exp.big --><!-- if exp.slow -->{{ claim('exp.slow', 'slow') }}<!-- else -->y<!-- end --><!-- end -->"
    )
    assert shown(page, ctx) == "y"
    # a hardware claim in a branch of another claim: not its own, so it has no branches
    page = "<!-- if exp.big -->{{ claim('exp.fast', 'fast') }}<!-- else -->z<!-- end -->"
    with pytest.raises(BranchError, match="is not inside <!-- if exp.fast -->"):
        check_guards(page, ctx)


def test_a_hardware_claim_shown_bare_has_no_branches_even_where_this_run_bears_it_out(ctx):
    # another run may decide it otherwise: the page must be ready for it
    with pytest.raises(BranchError, match=r"the sentence of exp.fast, a claim about this hardware, is not inside"):
        check_guards("It was {{ claim('exp.fast', 'fast') }}.", ctx)
    with pytest.raises(BranchError, match=r"<!-- if exp.fast --> shows the sentence of exp.fast.*has no <!-- else -->"):
        check_guards("<!-- if exp.fast -->{{ claim('exp.fast', 'fast') }}<!-- end -->", ctx)
    # in a clause this run does not keep, it fails all the same: the check needs no data
    with pytest.raises(BranchError, match="exp.slow, a claim about this hardware, is not inside"):
        check_guards("<!-- if exp.huge -->{{ claim('exp.slow', 'slow') }}<!-- else -->z<!-- end -->", ctx)
    # a claim that is not about hardware needs no branch of its own
    assert unguarded("It is {{ claim('exp.big', 'big') }}.", ctx) == {}
    # ... and one that is, in its own branches, has them
    page = "<!-- if exp.fast -->{{ claim('exp.fast', 'fast') }}<!-- else -->{{ value('exp.ratio') }}<!-- end -->"
    assert unguarded(page, ctx) == {}


def test_every_unguarded_sentence_of_a_page_is_named_at_once(ctx):
    page = "{{ claim('exp.fast', 'a') }} and {{ claim('exp.beyond', 'b') }}"
    with pytest.raises(BranchError) as e:
        check_guards(page, ctx)
    assert "exp.fast" in str(e.value) and "exp.beyond" in str(e.value)


def test_a_claim_the_intervals_cannot_tell_is_shown_only_in_a_clause_for_that_outcome(ctx):
    three = (
        "<!-- if exp.beyond -->{{ claim('exp.beyond', 'faster by more than the margin') }}"
        "<!-- elif exp.same -->{{ claim('exp.same', 'practically the same') }}"
        "<!-- elif unsure exp.beyond -->{{ claim('exp.beyond', 'perhaps faster by the margin') }}"
        "<!-- else -->{{ value('exp.ratio') }}<!-- end -->"
    )
    assert shown(three, ctx) == "{{ claim('exp.beyond', 'perhaps faster by the margin') }}"
    assert "claim-noise" in render_markers(three, ctx) and "≈" in render_markers(three, ctx)
    # the same claim in the else clause, or bare, where its wording need not admit it
    noisy_else = (
        "<!-- if exp.beyond -->a {{ claim('exp.beyond', 'a') }}<!-- else -->{{ claim('exp.beyond', 'b') }}<!-- end -->"
    )
    with pytest.raises(BranchError, match=r"claim 'b' cannot be told by this run's intervals.*elif unsure exp.beyond"):
        shown(noisy_else, ctx)
    with pytest.raises(BranchError, match="claim 'c' cannot be told"):
        shown("{{ claim('exp.big', 'x') }} and {{ claim('exp.maybe', 'c') }}", ctx)
    assert "≈" in render_markers("<!-- if unsure exp.maybe -->{{ claim('exp.maybe', 'c') }}<!-- end -->", ctx)


def test_unsure_is_met_only_by_noise(ctx):
    page = "<!-- if unsure exp.big -->unsure<!-- elif unsure exp.huge -->unsure too<!-- else -->decided<!-- end -->"
    assert shown(page, ctx) == "decided"
    assert shown("<!-- if unsure exp.same -->unsure<!-- else -->decided<!-- end -->", ctx) == "unsure"


def test_blocks_nest_and_keep_the_first_clause_that_is_met(ctx):
    page = (
        "A<!-- if exp.big -->B<!-- if exp.huge -->C<!-- elif exp.fast -->D{{ claim('exp.fast', 'f') }}"
        "<!-- else -->E<!-- end -->F<!-- else -->G<!-- end -->H"
    )
    assert shown(page, ctx) == "ABD{{ claim('exp.fast', 'f') }}FH"
    assert shown("<!-- if exp.huge -->x<!-- end -->.", ctx) == "."
    assert ctx.used >= {"exp.big", "exp.huge", "exp.fast"}


@pytest.mark.parametrize(
    "page, message",
    [
        ("<!-- if exp.big -->a<!-- else -->b<!-- else -->c<!-- end -->", "<!-- else --> after <!-- else -->"),
        ("a<!-- else -->b", "<!-- else --> outside any <!-- if ... --> block"),
        ("<!-- if exp.big -->a<!-- if exp.huge -->b<!-- end -->", "<!-- if exp.big --> has no <!-- end -->"),
        ("<!-- if exp.big and exp.huge -->a<!-- end -->", "a condition is a claim's id, or unsure and a claim's id"),
        ("<!-- if exp.nothing -->a<!-- end -->", "unknown claim 'exp.nothing'"),
    ],
)
def test_a_malformed_block_fails_naming_the_page_and_the_tag(ctx, page, message):
    with pytest.raises(MarkerError) as e:
        render_markers(page, ctx)
    assert str(e.value).startswith("p.md: ") and message in str(e.value), str(e.value)


LISTED = REPO / "tests" / "prose" / "unbranched.txt"


def _listed() -> dict[tuple[str, str], str]:
    import re

    out = {}
    for raw in LISTED.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            page, claim, why = re.split(r"\s{2,}", raw.strip(), maxsplit=2)
            out[(page, claim)] = why
    return out


def test_every_committed_page_has_a_branch_for_every_outcome_of_its_hardware_claims():
    """The part of the rule that does not depend on the data, on every page of every
    edition: a run that decides a hardware claim otherwise still builds. A sentence still
    waiting for its branches is listed in tests/prose/unbranched.txt, and a listed one
    that has them fails too, so that the list only shrinks."""
    from sitekit.claims import claims
    from sitekit.claims.claim_files import load

    book = load(REPO / "measure/experiments", REPO, claims.CALLS)
    listed, seen, problems = _listed(), set(), []
    for page in sorted((REPO / "docs").glob("*.md")):
        english = page.name.split(".")[0] + ".md"
        ctx = PageContext(data=None, page=page.name, url_prefix="", claims=book)
        for ref, why in unguarded(page.read_text(encoding="utf-8"), ctx).items():
            seen.add((english, ref))
            if (english, ref) not in listed:
                problems.append(f"{page.name}: {why}")
    assert not problems, "\n".join(problems)
    stale = sorted(set(listed) - seen)
    assert not stale, f"tests/prose/unbranched.txt lists sentences that have their branches now: {stale}"


@pytest.mark.build
def test_no_sentence_the_built_site_shows_rests_on_a_claim_that_does_not_hold(built_site):
    """Every claim mark of every page of every edition, read back from the built HTML and
    decided again on the committed data: a ✓ holds, a ≈ cannot be told, and no page
    carries a mark for a claim that does not hold."""
    import re

    from sitekit.claims import claims
    from sitekit.claims.claim_files import load
    from sitekit.claims.intervals import NOISE

    book = load(REPO / "measure/experiments", REPO, claims.CALLS)
    data = SiteData(REPO / "site_data")
    mark = re.compile(r'<a class="claim ([a-z-]+)" href="#check-([a-z_]+\.[a-z0-9_]+)" title="[^"]*">(.)</a>')
    checked, pages = 0, 0
    for page in sorted(built_site.rglob("index.html")):
        text = page.read_text(encoding="utf-8")
        found = mark.findall(text)
        pages += bool(found)
        for kind, ref, sign in found:
            holds = claims.check(data, book.get(ref).expression)[0]
            where = f"{page.relative_to(built_site)}: {ref}"
            assert (kind, sign) in (("claim-ok", "✓"), ("claim-noise", "≈")), where
            assert holds is (True if kind == "claim-ok" else NOISE), f"{where} is shown as {sign} but is {holds}"
            checked += 1
        assert "⚠" not in re.sub(r"<[^>]+>", "", text.split("<article", 1)[-1].split("</article>", 1)[0]), page
    assert pages >= 50 and checked > 800, (pages, checked)


def _committed(experiment: str, outcome) -> str:
    """The first claim about this hardware of ``experiment`` that the committed run decides
    ``outcome`` (False: not borne out; NOISE: its intervals cannot tell)."""
    from sitekit.claims import claims
    from sitekit.claims.claim_files import load

    data = SiteData(REPO / "site_data")
    book = load(REPO / "measure" / "experiments", REPO, claims.CALLS)
    for ref, entry in book.entries.items():
        if ref.startswith(f"{experiment}.") and entry.hardware:
            if claims.check(data, entry.expression)[0] is outcome:
                return ref
    pytest.skip(f"the committed run decides no claim of {experiment} that way")


def test_a_made_up_page_over_the_committed_data_builds_only_with_the_branch_the_data_picks():
    """The hook itself, as a build runs it, on a page written for the test: a claim about
    this hardware that the committed run did not bear out refuses the page when its
    sentence is shown, and the page builds with its branch; one the intervals cannot tell
    shows only in its unsure clause, with ≈. The claims are picked from the committed data."""
    from mkdocs.exceptions import PluginError

    from tests.helpers import render_page

    failed = _committed("speculative_decoding", False)
    under = "{{ claim('" + failed + "', 'A sentence the run did not bear out') }}"
    with pytest.raises(PluginError, match=r"claim 'A sentence the run did not bear out' does not hold"):
        render_page("speculative-decoding.md", f"A made-up page. {under}.")
    branched = f"<!-- if {failed} -->{under}.<!-- else -->What was found instead.<!-- end -->"
    out = render_page("speculative-decoding.md", branched)
    assert "What was found instead" in out and "did not bear out" not in out and "⚠" not in out

    from sitekit.claims.intervals import NOISE

    noise = _committed("batching", NOISE)
    drop = "{{ claim('" + noise + "', 'A sentence the intervals cannot tell') }}"
    with pytest.raises(PluginError, match=r"cannot be told by this run's intervals"):
        render_page("batching.md", f"A made-up page. {drop}.")
    out = render_page("batching.md", f"<!-- if unsure {noise} -->{drop}.<!-- else -->no<!-- end -->")
    assert "intervals cannot tell" in out and "≈" in out and "claim-noise" in out
