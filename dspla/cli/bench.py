"""dspla bench: placeholder."""
def register(sub, common):
    p = sub.add_parser("bench", parents=[common], help="benchmarks")
    p.set_defaults(func=lambda a: print("bench"))
