"""measure/lab/step_counts.py: operators, FLOPs and bytes counted on steps worked by hand."""

import torch
import torch.nn.functional as F

from measure.lab.step_counts import cache_storages, count_step, flops_of, tensor_bytes, weight_storages


def test_a_linear_layer_counted_by_hand():
    w = torch.ones(3, 4)  # 12 float32 weights: 48 bytes
    x = torch.ones(2, 4)  # 2 rows in: 32 bytes; 2 x 3 out: 24 bytes
    c = count_step(lambda: F.linear(x, w), weights={w.untyped_storage().data_ptr()})
    assert c.ops == 1
    assert c.flops == 2 * 2 * 3 * 4  # a multiply-add per weight per row, two FLOPs each
    assert (c.weight_bytes, c.cache_bytes, c.activation_bytes) == (48, 0, 32 + 24)
    assert c.moved_bytes == 48  # the activations stay in the processor's caches


def test_a_cache_grown_by_concatenation_is_the_cache():
    cache = torch.ones(1, 2, 4)  # two positions: 32 bytes
    new = torch.ones(1, 1, 4)  # the step's keys: 16 bytes

    def step():
        grown = torch.cat([cache, new], dim=1)  # reads 32 + 16, writes 48 that are the cache now
        return grown * 2  # reads the grown cache (48) and writes an activation (48)

    c = count_step(step, cache=cache_storages([cache]))
    assert c.ops == 2
    assert c.cache_bytes == 32 + 48 + 48
    assert c.activation_bytes == 16 + 48
    assert c.flops == 0  # elementwise work is not counted


def test_views_move_nothing_and_lookups_read_their_rows():
    table = torch.ones(10, 4)  # 160 bytes, of which a lookup of two rows reads 32
    ids = torch.tensor([1, 7])  # 16 bytes of int64

    def step():
        rows = F.embedding(ids, table)
        return rows.view(8)

    c = count_step(step, weights=weight_storages(torch.nn.Embedding.from_pretrained(table)) | {table.data_ptr()})
    assert c.ops == 2
    assert c.weight_bytes == 32
    assert c.activation_bytes == 16 + 32  # the ids read, the rows written; the view nothing


def test_a_broadcast_tensor_counts_its_elements_once():
    assert tensor_bytes(torch.ones(3).expand(4, 3)) == 12
    assert tensor_bytes(torch.ones(2, 3)) == 24
    assert tensor_bytes(torch.ones(2, 3, dtype=torch.bfloat16)) == 12


def test_attention_counts_its_two_products():
    q, k = torch.ones(1, 2, 3, 4), torch.ones(1, 2, 5, 4)  # 2 heads, 3 queries, 5 keys, 4 dims
    out = torch.ones(1, 2, 3, 4)
    # q.kT: 2 x 3 x 5 multiply-adds of 4 terms; p.v the same again
    assert flops_of("_scaled_dot_product_flash_attention_for_cpu", (q, k, k), out) == 2 * 2 * (2 * 3 * 5 * 4)
    c = count_step(lambda: F.scaled_dot_product_attention(q, k, k))
    assert c.flops == 2 * 2 * (2 * 3 * 5 * 4)


def test_matrix_products_of_every_form():
    a, b, bias = torch.ones(2, 4), torch.ones(4, 3), torch.ones(3)
    assert count_step(lambda: a @ b).flops == 2 * 2 * 3 * 4
    assert count_step(lambda: torch.addmm(bias, a, b)).flops == 2 * 2 * 3 * 4
    assert count_step(lambda: torch.bmm(a[None], b[None])).flops == 2 * 2 * 3 * 4
    assert flops_of("add", (a, a), a) == 0


def test_the_cache_a_concatenation_replaced_stays_alive_while_the_step_is_counted():
    """A concatenation replaces the cache and frees the old one; were it freed, the
    allocator could put an activation at its address, which would then be counted as the
    cache's. The count holds it until the step ends, and its bytes are exact."""
    import weakref

    holder = {"k": torch.ones(1, 64, 16)}
    old = weakref.ref(holder["k"])
    alive = []

    def step():
        holder["k"] = torch.cat([holder["k"], torch.ones(1, 1, 16)], dim=1)  # the old cache is dropped
        alive.append(old() is not None)
        x = torch.empty(1, 64, 16).fill_(1.0)
        return (x * 2).sum()

    counts = count_step(step, cache=cache_storages([holder["k"]]))
    assert alive == [True]
    assert counts.cache_bytes == (64 + 65) * 16 * 4  # the cat's read of the cache and the grown cache
