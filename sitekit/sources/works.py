"""The published works the pages rest on, each held once, and which page cites which.

Not a measurement: a bibliography, read by the hook (``references.py``) to render each
page's numbered list, the in-text mentions and the references page. Every detail
(authors in the paper's order, year, title, venue, arXiv id) was checked against the
paper's own listing; a URL is the arXiv abstract where the work has one, else the
publisher's page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Work:
    key: str  # family name of the first author and year, e.g. "kwon2023"
    authors: tuple[str, ...]  # "Given Family", in the paper's order
    year: int
    title: str
    venue: str
    url: str
    arxiv: str | None = None  # the arXiv id, when the work has one


WORKS: tuple[Work, ...] = (
    Work(
        "vaswani2017",
        (
            "Ashish Vaswani",
            "Noam Shazeer",
            "Niki Parmar",
            "Jakob Uszkoreit",
            "Llion Jones",
            "Aidan N. Gomez",
            "Łukasz Kaiser",
            "Illia Polosukhin",
        ),
        2017,
        "Attention Is All You Need",
        "Advances in Neural Information Processing Systems 30 (NeurIPS 2017)",
        "https://arxiv.org/abs/1706.03762",
        "1706.03762",
    ),
    Work(
        "shazeer2019",
        ("Noam Shazeer",),
        2019,
        "Fast Transformer Decoding: One Write-Head is All You Need",
        "arXiv preprint",
        "https://arxiv.org/abs/1911.02150",
        "1911.02150",
    ),
    Work(
        "ainslie2023",
        (
            "Joshua Ainslie",
            "James Lee-Thorp",
            "Michiel de Jong",
            "Yury Zemlyanskiy",
            "Federico Lebrón",
            "Sumit Sanghai",
        ),
        2023,
        "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints",
        "Proceedings of EMNLP 2023",
        "https://arxiv.org/abs/2305.13245",
        "2305.13245",
    ),
    Work(
        "dao2022",
        ("Tri Dao", "Daniel Y. Fu", "Stefano Ermon", "Atri Rudra", "Christopher Ré"),
        2022,
        "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
        "Advances in Neural Information Processing Systems 35 (NeurIPS 2022)",
        "https://arxiv.org/abs/2205.14135",
        "2205.14135",
    ),
    Work(
        "williams2009",
        ("Samuel Williams", "Andrew Waterman", "David Patterson"),
        2009,
        "Roofline: An Insightful Visual Performance Model for Multicore Architectures",
        "Communications of the ACM 52(4), pp. 65–76",
        "https://doi.org/10.1145/1498765.1498785",
    ),
    Work(
        "yu2022",
        ("Gyeong-In Yu", "Joo Seong Jeong", "Geon-Woo Kim", "Soojeong Kim", "Byung-Gon Chun"),
        2022,
        "Orca: A Distributed Serving System for Transformer-Based Generative Models",
        "16th USENIX Symposium on Operating Systems Design and Implementation (OSDI 22), pp. 521–538",
        "https://www.usenix.org/conference/osdi22/presentation/yu",
    ),
    Work(
        "kwon2023",
        (
            "Woosuk Kwon",
            "Zhuohan Li",
            "Siyuan Zhuang",
            "Ying Sheng",
            "Lianmin Zheng",
            "Cody Hao Yu",
            "Joseph E. Gonzalez",
            "Hao Zhang",
            "Ion Stoica",
        ),
        2023,
        "Efficient Memory Management for Large Language Model Serving with PagedAttention",
        "Proceedings of the 29th Symposium on Operating Systems Principles (SOSP 2023)",
        "https://arxiv.org/abs/2309.06180",
        "2309.06180",
    ),
    Work(
        "zheng2024",
        (
            "Lianmin Zheng",
            "Liangsheng Yin",
            "Zhiqiang Xie",
            "Chuyue Sun",
            "Jeff Huang",
            "Cody Hao Yu",
            "Shiyi Cao",
            "Christos Kozyrakis",
            "Ion Stoica",
            "Joseph E. Gonzalez",
            "Clark Barrett",
            "Ying Sheng",
        ),
        2024,
        "SGLang: Efficient Execution of Structured Language Model Programs",
        "Advances in Neural Information Processing Systems 37 (NeurIPS 2024)",
        "https://arxiv.org/abs/2312.07104",
        "2312.07104",
    ),
    Work(
        "agrawal2024",
        (
            "Amey Agrawal",
            "Nitin Kedia",
            "Ashish Panwar",
            "Jayashree Mohan",
            "Nipun Kwatra",
            "Bhargav S. Gulavani",
            "Alexey Tumanov",
            "Ramachandran Ramjee",
        ),
        2024,
        "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve",
        "18th USENIX Symposium on Operating Systems Design and Implementation (OSDI 24)",
        "https://arxiv.org/abs/2403.02310",
        "2403.02310",
    ),
    Work(
        "dettmers2022",
        ("Tim Dettmers", "Mike Lewis", "Younes Belkada", "Luke Zettlemoyer"),
        2022,
        "LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale",
        "Advances in Neural Information Processing Systems 35 (NeurIPS 2022)",
        "https://arxiv.org/abs/2208.07339",
        "2208.07339",
    ),
    Work(
        "dettmers2023",
        ("Tim Dettmers", "Artidoro Pagnoni", "Ari Holtzman", "Luke Zettlemoyer"),
        2023,
        "QLoRA: Efficient Finetuning of Quantized LLMs",
        "Advances in Neural Information Processing Systems (NeurIPS 2023)",
        "https://arxiv.org/abs/2305.14314",
        "2305.14314",
    ),
    Work(
        "xiao2023",
        ("Guangxuan Xiao", "Ji Lin", "Mickael Seznec", "Hao Wu", "Julien Demouth", "Song Han"),
        2023,
        "SmoothQuant: Accurate and Efficient Post-Training Quantization for Large Language Models",
        "International Conference on Machine Learning (ICML 2023), PMLR, pp. 38087–38099",
        "https://arxiv.org/abs/2211.10438",
        "2211.10438",
    ),
    Work(
        "frantar2023",
        ("Elias Frantar", "Saleh Ashkboos", "Torsten Hoefler", "Dan Alistarh"),
        2023,
        "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers",
        "International Conference on Learning Representations (ICLR 2023)",
        "https://arxiv.org/abs/2210.17323",
        "2210.17323",
    ),
    Work(
        "lin2024",
        (
            "Ji Lin",
            "Jiaming Tang",
            "Haotian Tang",
            "Shang Yang",
            "Wei-Ming Chen",
            "Wei-Chen Wang",
            "Guangxuan Xiao",
            "Xingyu Dang",
            "Chuang Gan",
            "Song Han",
        ),
        2024,
        "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration",
        "Proceedings of Machine Learning and Systems (MLSys 2024)",
        "https://arxiv.org/abs/2306.00978",
        "2306.00978",
    ),
    Work(
        "yao2022",
        (
            "Zhewei Yao",
            "Reza Yazdani Aminabadi",
            "Minjia Zhang",
            "Xiaoxia Wu",
            "Conglong Li",
            "Yuxiong He",
        ),
        2022,
        "ZeroQuant: Efficient and Affordable Post-Training Quantization for Large-Scale Transformers",
        "Advances in Neural Information Processing Systems (NeurIPS 2022)",
        "https://arxiv.org/abs/2206.01861",
        "2206.01861",
    ),
    Work(
        "micikevicius2022",
        (
            "Paulius Micikevicius",
            "Dusan Stosic",
            "Neil Burgess",
            "Marius Cornea",
            "Pradeep Dubey",
            "Richard Grisenthwaite",
            "Sangwon Ha",
            "Alexander Heinecke",
            "Patrick Judd",
            "John Kamalu",
            "Naveen Mellempudi",
            "Stuart Oberman",
            "Mohammad Shoeybi",
            "Michael Siu",
            "Hao Wu",
        ),
        2022,
        "FP8 Formats for Deep Learning",
        "arXiv preprint",
        "https://arxiv.org/abs/2209.05433",
        "2209.05433",
    ),
    Work(
        "sun2024",
        ("Mingjie Sun", "Xinlei Chen", "J. Zico Kolter", "Zhuang Liu"),
        2024,
        "Massive Activations in Large Language Models",
        "Conference on Language Modeling (COLM 2024)",
        "https://arxiv.org/abs/2402.17762",
        "2402.17762",
    ),
    Work(
        "leviathan2023",
        ("Yaniv Leviathan", "Matan Kalman", "Yossi Matias"),
        2023,
        "Fast Inference from Transformers via Speculative Decoding",
        "International Conference on Machine Learning (ICML 2023), PMLR, pp. 19274–19286",
        "https://arxiv.org/abs/2211.17192",
        "2211.17192",
    ),
    Work(
        "chen2023",
        (
            "Charlie Chen",
            "Sebastian Borgeaud",
            "Geoffrey Irving",
            "Jean-Baptiste Lespiau",
            "Laurent Sifre",
            "John Jumper",
        ),
        2023,
        "Accelerating Large Language Model Decoding with Speculative Sampling",
        "arXiv preprint",
        "https://arxiv.org/abs/2302.01318",
        "2302.01318",
    ),
    Work(
        "bucilua2006",
        ("Cristian Buciluă", "Rich Caruana", "Alexandru Niculescu-Mizil"),
        2006,
        "Model Compression",
        "Proceedings of the 12th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining"
        " (KDD 2006), pp. 535–541",
        "https://doi.org/10.1145/1150402.1150464",
    ),
    Work(
        "hinton2015",
        ("Geoffrey Hinton", "Oriol Vinyals", "Jeff Dean"),
        2015,
        "Distilling the Knowledge in a Neural Network",
        "NIPS Deep Learning Workshop",
        "https://arxiv.org/abs/1503.02531",
        "1503.02531",
    ),
)

# Per page, the works it rests on, in the order its list numbers them. Each is there
# because the page measures the idea the work introduced or depends on it. The pages'
# order is the nav's (mkdocs.yml), wherever they are listed together (the bibliography).
PAGES: dict[str, tuple[str, ...]] = {
    # the decoder whose inference every page measures
    "index.md": ("vaswani2017",),
    # keys and values cached across steps; the score matrix the cache does not shrink
    "kv-cache.md": ("vaswani2017", "dao2022"),
    # bytes per token by number of key-value heads: MHA, MQA, GQA
    "cache-size.md": ("vaswani2017", "shazeer2019", "ainslie2023"),
    # attention over the prompt, whose square an IO-aware kernel keeps out of memory
    "prefill-decode.md": ("dao2022",),
    # iteration-level (continuous) batching and paged KV memory, both simulated there
    "batching.md": ("yu2022", "kwon2023"),
    # int8 per row as LLM.int8() scales weights; NF4 block-64 from QLoRA
    "weight-quantization.md": ("dettmers2022", "dettmers2023"),
    # outlier feature dimensions, and the methods its table sets beside the measurement
    "activation-outliers.md": (
        "dettmers2022",
        "xiao2023",
        "frantar2023",
        "lin2024",
        "yao2022",
        "micikevicius2022",
        "sun2024",
    ),
    # perplexity of the same schemes: int8 per row, NF4
    "quality.md": ("dettmers2022", "dettmers2023"),
    # draft, verify, accept: the algorithm measured there
    "speculative-decoding.md": ("leviathan2023", "chen2023"),
    # soft labels at a temperature, and the idea of training a small model on a large one's outputs
    "distillation.md": ("bucilua2006", "hinton2015"),
    # weights plus a cache per token whose size depends on the key-value heads (the 70B's grouped)
    "memory-budget.md": ("ainslie2023",),
    # the calculator reads the key-value heads from a config.json; it leaves out fragmentation
    "calculator.md": ("shazeer2019", "ainslie2023", "kwon2023"),
    # the repository's own procedures, and the roofline every timed step is set against
    "methods.md": ("williams2009",),
    # the closing page names the techniques whose savings it gathers
    "what-to-reach-for.md": (
        "vaswani2017",
        "ainslie2023",
        "yu2022",
        "kwon2023",
        "dettmers2022",
        "dettmers2023",
        "leviathan2023",
        "hinton2015",
    ),
    "prompt-reuse.md": ("kwon2023", "zheng2024", "agrawal2024"),
}
