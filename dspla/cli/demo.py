"""dspla demo: placeholder until examples exist."""
def register(sub, common):
    p = sub.add_parser("demo", parents=[common], help="run the demo on a generated graph")
    p.set_defaults(func=lambda a: print("demo"))
