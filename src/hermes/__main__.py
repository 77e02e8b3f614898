from hermes.cli.entry import main

main()
