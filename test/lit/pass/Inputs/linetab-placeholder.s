# A 64-byte causal_lines section, like the placeholder the link step adds.
        .section causal_lines,"a",@progbits
        .balign 8
        .zero 64
        .section .note.GNU-stack,"",@progbits
